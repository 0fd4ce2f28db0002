"""Which PostgreSQL errors are worth another try: psycopg 3's errors, judged by SQLSTATE where they
carry one (https://www.postgresql.org/docs/current/errcodes-appendix.html).

An error the server sent carries its SQLSTATE (``exc.sqlstate``). An error of libpq itself carries
none: a connection refused, "server closed the connection unexpectedly", "SSL SYSCALL error: EOF
detected", "consuming input failed"; psycopg raises those as ``OperationalError``. So does a failed
connection attempt, even when the server answered it: the server's refusal ("the database system is
starting up") arrives as the text of that OperationalError, without the SQLSTATE it was sent with.
"""

from __future__ import annotations

import re

# Serialization failure, deadlock, lock_timeout ran out (55P03 lock_not_available), an
# administrator's or a crash's shutdown of this session (57P01, 57P02), the server starting up,
# shutting down or in recovery (57P03 cannot_connect_now), idle_session_timeout (57P05), and too
# many connections (53300).
TRANSIENT_STATES = frozenset({"40001", "40P01", "55P03", "57P01", "57P02", "57P03", "57P05", "53300"})
# What the server answers a connection attempt it cannot take now, with 57P03 or 53300: the English
# texts of PostgreSQL's src/backend/tcop/backend_startup.c (CAC_STARTUP, CAC_NOTCONSISTENT,
# CAC_NOTHOTSTANDBY, CAC_SHUTDOWN, CAC_RECOVERY, CAC_TOOMANY; postmaster.c before PostgreSQL 17) and
# the reserved-slots refusal of src/backend/utils/init/postinit.c. A server whose lc_messages is
# not English answers in its language: then a first connection meeting a restart fails at once.
NOT_READY = re.compile(
    r"the database system is (starting up|shutting down|in recovery mode|not yet accepting connections"
    r"|not accepting connections)|sorry, too many clients already|remaining connection slots are reserved",
    re.IGNORECASE,
)
# libpq's prefix of a message the server sent (its severity, in English unless lc_messages says otherwise):
# the server answered, so it is up, and only its word says whether to try again (not a wrong password).
SERVER_ANSWER = re.compile(r"\b(FATAL|ERROR|PANIC):  ")


def is_transient(exc: BaseException, operational: bool, first_connect: bool) -> bool:
    """``operational``: ``exc`` is a psycopg OperationalError.

    The server's own word counts on every connection: a server starting up is at the right
    address, and one that refuses a login or names no such database will say so again. A
    connection that libpq could not make or lost counts only once the address is proven: before,
    it is most likely a wrong host or port.
    """
    state = getattr(exc, "sqlstate", None)
    if state:
        return state in TRANSIENT_STATES or (state.startswith("08") and not first_connect)
    if not operational:
        return False
    text = str(exc)
    if SERVER_ANSWER.search(text):
        return bool(NOT_READY.search(text))
    return not first_connect
