"""Log lines from the Python processes Spark starts for the source and sink.

Those processes never run the job's logging set-up, so without a handler sqlqueue's INFO lines
(one per micro-batch) would vanish. The 'sqlqueue' logger gets a stderr handler there unless the
application configured one; SQLQUEUE_LOG_LEVEL sets its level (default INFO).
"""

from __future__ import annotations

import logging
import os
import sys

_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def worker_logger(name: str) -> logging.Logger:
    root = logging.getLogger("sqlqueue")
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(_FORMAT))
        root.addHandler(handler)
        root.setLevel(os.environ.get("SQLQUEUE_LOG_LEVEL", "INFO").upper())
        root.propagate = False
    return logging.getLogger(name)
