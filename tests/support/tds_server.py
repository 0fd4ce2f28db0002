"""A recording TDS 7.4 stub for tests: the real FreeTDS ODBC driver logs in to it on loopback.

It is not a database. It answers PRELOGIN without TLS, parses LOGIN7 (user, database, app, the
password decoded), records every SQL batch and RPC (procedure, parameter names, declared types and
decoded values) and answers DONE, or canned result sets for statements matching a regex.

Section numbers are those of Microsoft's [MS-TDS] specification:
2.2.3 packet header, 2.2.6 messages, 2.2.7 tokens, 2.2.5.4-2.2.5.6 data types and TYPE_INFO.
Only 127.0.0.1 is served; `with TdsServer() as server:` stops it and its connections on exit.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import decimal
import re
import socket
import struct
import threading
import time
import uuid
from dataclasses import dataclass, field

# Packet types (2.2.3.1.1)
SQL_BATCH, RPC, REPLY, ATTENTION, LOGIN7, PRELOGIN, TRANSACTION = 0x01, 0x03, 0x04, 0x06, 0x10, 0x12, 0x0E
TDS74 = 0x74000004  # LOGINACK TDSVersion for 7.4 (2.2.7.14)
SERVER_VERSION = (16, 0, 4135)  # SQL Server 2022 CU-ish: 16.0.4135
COLLATION = bytes.fromhex("0904d00034")  # SQL_Latin1_General_CP1_CI_AS (2.2.5.1.2)
PROCS = {
    1: "sp_cursor",
    10: "sp_executesql",
    11: "sp_prepare",
    12: "sp_execute",
    13: "sp_prepexec",
    15: "sp_unprepare",
}  # ProcIDs (2.2.6.6)
DONE_FINAL, DONE_MORE, DONE_ERROR, DONE_COUNT, DONE_ATTN = 0x00, 0x01, 0x02, 0x10, 0x20


# ---- records -------------------------------------------------------------------------------------
@dataclass
class Login:
    user: str
    password: str
    database: str
    app: str
    host: str
    server: str
    language: str
    tds_version: int
    packet_size: int


@dataclass
class Param:
    name: str
    type_name: str  # base SQL type: 'nvarchar', 'bigint', 'varbinary', 'ntext', ...
    declared_size: int | str | None  # chars for n-types, bytes otherwise, 'max' for PLP, None if fixed
    value: object
    status: int = 0  # 0x01 = output parameter (2.2.6.6 StatusFlags)
    scale: int | None = None
    tds_type: int = 0  # the TYPE_INFO type byte, e.g. 0xE7 NVARCHARTYPE, 0x26 INTNTYPE

    @property
    def sql_type(self) -> str:
        return self.type_name if self.declared_size is None else f"{self.type_name}({self.declared_size})"


@dataclass
class Rpc:
    proc: str
    params: list[Param]
    statement: str | None = None  # sp_executesql / sp_prepexec / sp_prepare statement text
    declaration: str | None = None  # their '@P1 nvarchar(max),...' parameter declaration

    @property
    def values(self) -> list[Param]:
        """The statement's own parameters (without the stored procedure's handle/stmt/params)."""
        skip = {"sp_executesql": 2, "sp_prepexec": 3, "sp_execute": 1}.get(self.proc, 0)
        return self.params[skip:]


@dataclass
class Column:
    name: str
    sql_type: str  # 'int', 'smallint', 'bigint', 'nvarchar' (nvarchar(4000) on the wire)


@dataclass
class ResultSet:
    columns: list[Column]
    rows: list[tuple] = field(default_factory=list)


# ---- reading requests --------------------------------------------------------------------------
class Reader:
    """A cursor over one message's bytes, little-endian as TDS is (2.2.5.1)."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise ValueError(f"truncated message: need {n} bytes at {self.pos} of {len(self.data)}")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt: str):
        return struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt)))[0]

    def b_varchar(self) -> str:
        return self.take(self.unpack("B") * 2).decode("utf-16-le")

    def us_varchar(self) -> str:
        return self.take(self.unpack("H") * 2).decode("utf-16-le")

    def at_end(self) -> bool:
        return self.pos >= len(self.data)

    def skip_all_headers(self) -> None:
        """ALL_HEADERS (2.2.5.3): TotalLength counts itself."""
        self.take(self.unpack("I") - 4)


def decode_password(raw: bytes) -> str:
    """LOGIN7 password (2.2.6.4): each byte had its nibbles swapped then was XORed with 0xA5."""
    return bytes((((b ^ 0xA5) << 4) & 0xF0) | ((b ^ 0xA5) >> 4) for b in raw).decode("utf-16-le")


def parse_login7(data: bytes) -> Login:
    """LOGIN7 (2.2.6.4): a 36-byte fixed part, then (offset, length-in-chars) pairs into the data."""
    tds_version, packet_size = struct.unpack_from("<II", data, 4)
    pairs = struct.unpack_from("<" + "HH" * 9, data, 36)

    def field_(i: int, raw: bool = False):
        off, n = pairs[2 * i], pairs[2 * i + 1]
        chunk = data[off : off + 2 * n]
        return chunk if raw else chunk.decode("utf-16-le")

    return Login(
        user=field_(1),
        password=decode_password(field_(2, raw=True)),
        app=field_(3),
        host=field_(0),
        server=field_(4),
        language=field_(7),
        database=field_(8),
        tds_version=tds_version,
        packet_size=packet_size,
    )


# TYPE_INFO (2.2.5.4): fixed-length types carry no length; BYTELEN types a 1-byte maximum length;
# USHORTLEN types 2 bytes (0xFFFF = PLP, 2.2.5.2.3); LONGLEN types 4 bytes.
FIXED = {
    0x1F: ("null", 0),
    0x30: ("tinyint", 1),
    0x32: ("bit", 1),
    0x34: ("smallint", 2),
    0x38: ("int", 4),
    0x3A: ("smalldatetime", 4),
    0x3B: ("real", 4),
    0x3C: ("money", 8),
    0x3D: ("datetime", 8),
    0x3E: ("float", 8),
    0x7A: ("smallmoney", 4),
    0x7F: ("bigint", 8),
}
BYTELEN = {
    0x24: "uniqueidentifier",
    0x26: "intn",
    0x37: "decimal",
    0x3F: "numeric",
    0x68: "bit",
    0x6A: "decimal",
    0x6C: "numeric",
    0x6D: "fltn",
    0x6E: "moneyn",
    0x6F: "datetimn",
    0x25: "varbinary",
    0x27: "varchar",
    0x2D: "binary",
    0x2F: "char",
}
SCALED = {0x29: "time", 0x2A: "datetime2", 0x2B: "datetimeoffset"}  # TYPE_INFO = scale only
USHORTLEN = {0xA5: "varbinary", 0xA7: "varchar", 0xAD: "binary", 0xAF: "char", 0xE7: "nvarchar", 0xEF: "nchar"}
LONGLEN = {0x22: "image", 0x23: "text", 0x63: "ntext"}
SIZED_NAMES = {
    "intn": {1: "tinyint", 2: "smallint", 4: "int", 8: "bigint"},
    "fltn": {4: "real", 8: "float"},
    "moneyn": {4: "smallmoney", 8: "money"},
    "datetimn": {4: "smalldatetime", 8: "datetime"},
}
COLLATED = {0xA7, 0xAF, 0xE7, 0xEF, 0x23, 0x63}
NCHAR_TYPES = {0xE7, 0xEF, 0x63}


class ParamDecoder:
    """One RPC parameter (2.2.6.6 ParameterData): name, status, TYPE_INFO, value."""

    def __init__(self, r: Reader) -> None:
        self.r = r

    def param(self) -> Param:
        r = self.r
        name, status, tid = r.b_varchar(), r.unpack("B"), r.unpack("B")
        size: int | str | None = None
        scale = None
        if tid in FIXED:
            type_name = FIXED[tid][0]
        elif tid in BYTELEN:
            size, type_name = r.unpack("B"), BYTELEN[tid]
            if tid in (0x37, 0x3F, 0x6A, 0x6C):  # precision, scale
                prec, scale = r.unpack("B"), r.unpack("B")
                size = f"{prec},{scale}"
            elif type_name in SIZED_NAMES:
                type_name, size = SIZED_NAMES[type_name][size], None
            elif tid in (0x24, 0x68):
                size = None
        elif tid == 0x28:
            type_name = "date"
        elif tid in SCALED:
            scale, type_name = r.unpack("B"), SCALED[tid]
            size = scale
        elif tid in USHORTLEN:
            size, type_name = r.unpack("H"), USHORTLEN[tid]
            if size == 0xFFFF:
                size = "max"
            elif tid in NCHAR_TYPES:
                size //= 2
        elif tid in LONGLEN:
            size, type_name = r.unpack("I"), LONGLEN[tid]
        else:
            raise ValueError(f"unsupported TYPE_INFO 0x{tid:02X} for parameter {name!r}")
        if tid in COLLATED:
            r.take(5)
        value = self.value(tid, size, scale)
        return Param(name, type_name, size, value, status, scale, tid)

    def value(self, tid: int, size, scale):
        r = self.r
        if tid in FIXED:
            return self.convert(tid, r.take(FIXED[tid][1]), scale)
        if tid in USHORTLEN and size == "max":  # PLP (2.2.5.2.3): total length, chunks, 0 terminator
            if r.unpack("Q") == 0xFFFFFFFFFFFFFFFF:
                return None
            chunks = []
            while n := r.unpack("I"):
                chunks.append(r.take(n))
            return self.convert(tid, b"".join(chunks), scale)
        if tid in USHORTLEN:
            n = r.unpack("H")
            return None if n == 0xFFFF else self.convert(tid, r.take(n), scale)
        if tid in LONGLEN:
            n = r.unpack("i")
            return None if n == -1 else self.convert(tid, r.take(n), scale)
        n = r.unpack("B")  # BYTELEN, date, scaled: 0 = NULL
        return None if n == 0 else self.convert(tid, r.take(n), scale)

    @staticmethod
    def convert(tid: int, b: bytes, scale):
        if tid in NCHAR_TYPES:
            return b.decode("utf-16-le")
        if tid in (0xA7, 0xAF, 0x23, 0x27, 0x2F):
            return b.decode("cp1252")
        if tid in (0xA5, 0xAD, 0x22, 0x25, 0x2D):
            return b
        if tid in (0x30, 0x34, 0x38, 0x7F, 0x26):
            return int.from_bytes(b, "little", signed=len(b) > 1)
        if tid in (0x32, 0x68):
            return bool(b[0])
        if tid in (0x3B, 0x3E, 0x6D):
            return struct.unpack("<f" if len(b) == 4 else "<d", b)[0]
        if tid in (0x3C, 0x7A, 0x6E):
            units = (
                struct.unpack("<i", b)[0]
                if len(b) == 4
                else ((struct.unpack("<i", b[:4])[0] << 32) | struct.unpack("<I", b[4:])[0])
            )
            return decimal.Decimal(units) / 10000
        if tid in (0x3D, 0x3A, 0x6F):  # DATETIME: days since 1900 + 1/300 s; SMALLDATETIME: days + minutes
            if len(b) == 4:
                days, minutes = struct.unpack("<HH", b)
                return dt.datetime(1900, 1, 1) + dt.timedelta(days=days, minutes=minutes)
            days, ticks = struct.unpack("<iI", b)
            return dt.datetime(1900, 1, 1) + dt.timedelta(days=days, milliseconds=round(ticks * 10 / 3))
        if tid == 0x24:
            return uuid.UUID(bytes_le=b)
        if tid in (0x37, 0x3F, 0x6A, 0x6C):
            mag = int.from_bytes(b[1:], "little")
            return decimal.Decimal(mag if b[0] else -mag).scaleb(-scale)
        if tid == 0x28:
            return dt.date(1, 1, 1) + dt.timedelta(days=int.from_bytes(b, "little"))
        if tid in SCALED:  # 2.2.5.5.1.7-10: time in 10**-scale s, then days since 0001-01-01, then offset
            tlen = 3 if scale <= 2 else 4 if scale <= 4 else 5
            t = dt.timedelta(microseconds=int.from_bytes(b[:tlen], "little") * 10**6 // 10**scale)
            if tid == 0x29:
                return (dt.datetime.min + t).time()
            when = dt.datetime(1, 1, 1) + dt.timedelta(days=int.from_bytes(b[tlen : tlen + 3], "little")) + t
            if tid == 0x2B:
                minutes = struct.unpack("<h", b[tlen + 3 :])[0]
                return when.replace(tzinfo=dt.timezone.utc).astimezone(dt.timezone(dt.timedelta(minutes=minutes)))
            return when
        raise ValueError(f"no decoder for 0x{tid:02X}")


def parse_rpc(data: bytes) -> list[Rpc]:
    """RPCRequest (2.2.6.6): ALL_HEADERS, then one or more RPCReqBatch separated by 0xFF/0x80."""
    r = Reader(data)
    r.skip_all_headers()
    calls = []
    while not r.at_end():
        n = r.unpack("H")
        proc = PROCS.get(r.unpack("H"), "?") if n == 0xFFFF else r.take(2 * n).decode("utf-16-le")
        r.unpack("H")  # OptionFlags
        params = []
        while not r.at_end() and r.data[r.pos] not in (0xFF, 0x80):
            params.append(ParamDecoder(r).param())
        if not r.at_end():
            r.take(1)
        rpc = Rpc(proc, params)
        positions = {"sp_executesql": (0, 1), "sp_prepexec": (2, 1), "sp_prepare": (2, 1)}
        if proc in positions:
            s, d = positions[proc]
            rpc.statement = params[s].value if len(params) > s else None
            rpc.declaration = params[d].value if len(params) > d else None
        calls.append(rpc)
    return calls


# ---- writing replies ---------------------------------------------------------------------------
def b_varchar(s: str) -> bytes:
    return bytes([len(s)]) + s.encode("utf-16-le")


def us_varchar(s: str) -> bytes:
    return struct.pack("<H", len(s)) + s.encode("utf-16-le")


class Tokens:
    """Token stream builders (2.2.7)."""

    @staticmethod
    def loginack(version=SERVER_VERSION) -> bytes:  # 2.2.7.14
        body = (
            b"\x01"
            + struct.pack(">I", TDS74)
            + b_varchar("Microsoft SQL Server")
            + bytes([version[0], version[1], version[2] >> 8, version[2] & 0xFF])
        )
        return b"\xad" + struct.pack("<H", len(body)) + body

    @staticmethod
    def envchange(kind: int, new: bytes, old: bytes = b"\x00") -> bytes:  # 2.2.7.9
        body = bytes([kind]) + new + old
        return b"\xe3" + struct.pack("<H", len(body)) + body

    @staticmethod
    def done(status=DONE_FINAL, rows=0, token=0xFD, cmd=0xC3) -> bytes:  # 2.2.7.6-8; C1 SELECT, C3 INSERT
        return bytes([token]) + struct.pack("<HHQ", status, cmd, rows)

    @staticmethod
    def message(number: int, text: str, severity: int, token=0xAA, state=1) -> bytes:  # 2.2.7.10/13
        body = (
            struct.pack("<iBB", number, state, severity)
            + us_varchar(text)
            + b_varchar("tds-stub")
            + b_varchar("")
            + struct.pack("<i", 1)
        )
        return bytes([token]) + struct.pack("<H", len(body)) + body

    @staticmethod
    def returnstatus(value=0) -> bytes:  # 2.2.7.18
        return b"\x79" + struct.pack("<i", value)

    @staticmethod
    def returnvalue_int(ordinal: int, name: str, value: int) -> bytes:  # 2.2.7.19
        return (
            b"\xac"
            + struct.pack("<H", ordinal)
            + b_varchar(name)
            + b"\x01"
            + struct.pack("<IH", 0, 0)
            + b"\x26\x04\x04"
            + struct.pack("<i", value)
        )

    @staticmethod
    def result(rs: ResultSet, done_token: int = 0xFD) -> bytes:  # COLMETADATA 2.2.7.4 + ROW 2.2.7.20
        ints = {"tinyint": 1, "smallint": 2, "int": 4, "bigint": 8}
        out = bytearray(b"\x81" + struct.pack("<H", len(rs.columns)))
        for c in rs.columns:
            out += struct.pack("<IH", 0, 0x0001 | 0x0008)  # UserType, Flags: nullable, updateable-unknown
            out += (
                (b"\x26" + bytes([ints[c.sql_type]]))
                if c.sql_type in ints
                else b"\xe7" + struct.pack("<H", 8000) + COLLATION
            )
            out += b_varchar(c.name)
        for row in rs.rows:
            out += b"\xd1"
            for c, v in zip(rs.columns, row):
                if c.sql_type in ints:
                    n = ints[c.sql_type]
                    out += b"\x00" if v is None else bytes([n]) + int(v).to_bytes(n, "little", signed=True)
                else:
                    s = None if v is None else str(v).encode("utf-16-le")
                    out += b"\xff\xff" if s is None else struct.pack("<H", len(s)) + s
        more = DONE_MORE if done_token == 0xFF else 0
        return bytes(out) + Tokens.done(DONE_COUNT | more, len(rs.rows), done_token, cmd=0xC1)


class Packets:
    """Messages split into packets of an 8-byte header (2.2.3.1) plus data; status 0x01 = EOM."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock, self.size = sock, 4096

    def _exact(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("client closed")
            buf += chunk
        return bytes(buf)

    def read(self) -> tuple[int, bytes]:
        data, kind = bytearray(), None
        while True:
            kind_, status, length = struct.unpack(">BBH", self._exact(8)[:4])
            kind = kind if kind is not None else kind_
            data += self._exact(length - 8)
            if status & 0x01:
                return kind, bytes(data)

    def write(self, data: bytes, kind: int = REPLY) -> None:
        step, n = self.size - 8, 1
        chunks = [data[i : i + step] for i in range(0, len(data), step)] or [b""]
        for i, chunk in enumerate(chunks):
            last = i == len(chunks) - 1
            header = struct.pack(">BBHHBB", kind, 1 if last else 0, len(chunk) + 8, 0, n & 0xFF, 0)
            self.sock.sendall(header + chunk)
            n += 1


# ---- the server ----------------------------------------------------------------------------------
class TdsServer:
    """`with TdsServer() as s:` serves 127.0.0.1:s.port until the block ends.

    Records `logins`, `batches` (SQL text), `rpcs` (Rpc), `transactions` and `requests` (all, in
    order). `reject_password` = a password answered with error 18456; `rowcount` = the row count of
    each DONE; `add_result(regex, columns, rows)` answers batches and RPC statements the regex
    searches with a result set; `type_info` = what sp_datatype_info_100 answers (see TYPE_INFO).
    """

    def __init__(self, rowcount: int = 0, reject_password: str | None = None) -> None:
        self.rowcount, self.reject_password = rowcount, reject_password
        self.type_info = dict(TYPE_INFO)
        self.results: list[tuple[re.Pattern, object]] = [  # ResultSet, or a function of the match
            (re.compile(r"sp_datatype_info\w*\s+(-?\d+)"), lambda m: type_info_result(m, self.type_info))
        ]
        self.logins: list[Login] = []
        self.batches: list[str] = []
        self.rpcs: list[Rpc] = []
        self.requests: list[object] = []
        self.transactions: list[str] = []  # 'begin', 'commit', 'rollback' (transaction manager requests)
        self.errors: list[str] = []
        self.busy = 0.0  # seconds spent answering requests (the stub's own cost)
        self.lock = threading.Lock()
        self._conns: list[socket.socket] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._thread = threading.Thread(target=self._accept, daemon=True, name="tds-stub")

    def add_result(self, pattern: str, columns: list[tuple[str, str]], rows: list[tuple]) -> None:
        self.results.insert(0, (re.compile(pattern, re.I | re.S), ResultSet([Column(*c) for c in columns], rows)))

    def clear(self) -> None:
        with self.lock:
            self.batches.clear(), self.rpcs.clear(), self.requests.clear(), self.transactions.clear()

    def __enter__(self) -> TdsServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        for s in [self._listener, *self._conns]:  # shutdown wakes a thread blocked in accept/recv
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()
        self._thread.join(5)

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self._conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        p = Packets(conn)
        try:
            while True:
                kind, data = p.read()
                start = time.perf_counter()
                reply = self._dispatch(p, kind, data)
                if reply is not None:
                    p.write(reply)
                self.busy += time.perf_counter() - start
        except (ConnectionError, OSError):
            pass
        except Exception as e:  # record, don't hang the client: it sees the connection drop
            with self.lock:
                self.errors.append(f"{type(e).__name__}: {e}")
        finally:
            conn.close()

    def _dispatch(self, p: Packets, kind: int, data: bytes) -> bytes | None:
        if kind == PRELOGIN:  # 2.2.6.5: VERSION, ENCRYPTION=ENCRYPT_NOT_SUP, INSTOPT, MARS, TERMINATOR
            opts = [
                (0x00, struct.pack(">BBHH", SERVER_VERSION[0], SERVER_VERSION[1], SERVER_VERSION[2], 0)),
                (0x01, b"\x02"),
                (0x02, b"\x00"),
                (0x04, b"\x00"),
            ]
            head, body, off = b"", b"", 5 * len(opts) + 1
            for tok, val in opts:
                head += struct.pack(">BHH", tok, off + len(body), len(val))
                body += val
            return head + b"\xff" + body
        if kind == LOGIN7:
            login = parse_login7(data)
            with self.lock:
                self.logins.append(login)
            if self.reject_password is not None and login.password == self.reject_password:
                return Tokens.message(18456, f"Login failed for user '{login.user}'.", 14) + Tokens.done(
                    DONE_ERROR, cmd=0
                )
            p.size = min(max(login.packet_size or 4096, 512), 32767)
            db = login.database or "master"
            return (
                Tokens.envchange(1, b_varchar(db), b_varchar("master"))
                + Tokens.message(5701, f"Changed database context to '{db}'.", 0, token=0xAB)
                + Tokens.envchange(7, b"\x05" + COLLATION)
                + Tokens.envchange(2, b_varchar("us_english"))
                + Tokens.loginack()
                + Tokens.envchange(4, b_varchar(str(p.size)), b_varchar("4096"))
                + Tokens.done(cmd=0)
            )
        if kind == SQL_BATCH:
            r = Reader(data)
            r.skip_all_headers()
            text = data[r.pos :].decode("utf-16-le")
            with self.lock:
                self.batches.append(text), self.requests.append(text)
            rs = self._canned(text)
            return Tokens.result(rs) if rs else Tokens.done(DONE_COUNT, self.rowcount)
        if kind == RPC:
            calls, out = parse_rpc(data), b""
            for i, call in enumerate(calls):  # 2.2.4.2.1.4: results end in DONEINPROC, the call in DONEPROC
                with self.lock:
                    self.rpcs.append(call), self.requests.append(call)
                rs = self._canned(call.statement) if call.statement else None
                out += Tokens.result(rs, 0xFF) if rs else Tokens.done(DONE_COUNT | DONE_MORE, self.rowcount, 0xFF)
                out += Tokens.returnstatus(0)
                if call.proc in ("sp_prepexec", "sp_prepare"):  # the OUTPUT @handle
                    out += Tokens.returnvalue_int(0, call.params[0].name if call.params else "", 1)
                out += Tokens.done(DONE_MORE if i < len(calls) - 1 else DONE_FINAL, token=0xFE, cmd=0xE0)
            return out
        if kind == TRANSACTION:  # 2.2.6.9: RequestType 5 begin, 7 commit, 8 rollback
            r = Reader(data)
            r.skip_all_headers()
            request = {5: "begin", 7: "commit", 8: "rollback"}.get(r.unpack("H"), "other")
            with self.lock:
                self.transactions.append(request), self.requests.append(("transaction", request))
            # ENVCHANGE 8 begin / 9 commit / 10 rollback (2.2.7.9) with an 8-byte descriptor;
            # FreeTDS asks commit/rollback to begin the next transaction (fBeginXact) when autocommit is off
            xact = b"\x08" + struct.pack("<Q", 1)
            out = Tokens.envchange(8, xact) if request == "begin" else b""
            if request in ("commit", "rollback"):
                out += Tokens.envchange(9 if request == "commit" else 10, b"\x00", xact)
                if r.unpack("B"):
                    out += Tokens.envchange(8, xact)
            return out + Tokens.done(cmd=0)
        if kind == ATTENTION:
            return Tokens.done(DONE_ATTN)
        raise ValueError(f"unexpected packet type 0x{kind:02X}")

    def _canned(self, text: str) -> ResultSet | None:
        for pattern, rs in self.results:
            if m := pattern.search(text):
                return rs(m) if callable(rs) else rs
        return None


# What SQL Server's sp_datatype_info_100 lists first per ODBC type (it orders rows by DATA_TYPE,
# AUTO_INCREMENT, MONEY, USERTYPE). pyodbc reads PRECISION (column 3) of the first row on connect as
# its varchar/nvarchar/varbinary maximum and its datetime precision, so these decide how it binds.
TYPE_INFO = {12: ("varchar", 8000), -9: ("nvarchar", 4000), -3: ("varbinary", 8000), 93: ("datetime2", 27)}


def type_info_result(match: re.Match, type_info: dict[int, tuple[str, int]] = TYPE_INFO) -> ResultSet:
    """sp_datatype_info_100 <type>,<odbcver> answered with its 20 columns, one row when known."""
    names = [
        "TYPE_NAME",
        "DATA_TYPE",
        "PRECISION",
        "LITERAL_PREFIX",
        "LITERAL_SUFFIX",
        "CREATE_PARAMS",
        "NULLABLE",
        "CASE_SENSITIVE",
        "SEARCHABLE",
        "UNSIGNED_ATTRIBUTE",
        "MONEY",
        "AUTO_INCREMENT",
        "LOCAL_TYPE_NAME",
        "MINIMUM_SCALE",
        "MAXIMUM_SCALE",
        "SQL_DATA_TYPE",
        "SQL_DATETIME_SUB",
        "NUM_PREC_RADIX",
        "INTERVAL_PRECISION",
        "USERTYPE",
    ]
    types = (
        ["nvarchar", "smallint", "int"]
        + ["nvarchar"] * 3
        + ["smallint"] * 6
        + ["nvarchar"]
        + ["smallint"] * 4
        + ["int", "smallint", "smallint"]
    )
    code = int(match.group(1))
    rows = []
    if code in type_info:
        name, precision = type_info[code]
        rows.append(
            (
                name,
                code,
                precision,
                None,
                None,
                None,
                1,
                0,
                3,
                None,
                0,
                None,
                name,
                None,
                None,
                code,
                None,
                None,
                None,
                0,
            )
        )
    return ResultSet([Column(n, t) for n, t in zip(names, types)], rows)


def main() -> None:
    """`python -m tests.support.tds_server`: serve in a process of its own (no GIL shared with the
    client, for timings), print the port, stop when stdin closes, then print one JSON summary line."""
    import collections
    import json
    import sys

    with TdsServer() as server:
        print(server.port, flush=True)
        sys.stdin.read()
        procs = collections.Counter(r.proc for r in server.rpcs)
    print(
        json.dumps(
            {
                "rpcs": procs,
                "batches": len(server.batches),
                "errors": server.errors,
                "busy": server.busy,
                "cpu": time.process_time(),
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
