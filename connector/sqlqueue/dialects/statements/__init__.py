"""SQL statements by concern, each a part built on the engine contract (``..engine.Engine``) and on the
parts it needs; no part knows an engine (an engine's own way of writing a part is a subclass in its module)."""
