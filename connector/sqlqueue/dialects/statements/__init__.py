"""SQL statements by concern, each a mixin over the engine contract (``..engine.Engine``)."""
