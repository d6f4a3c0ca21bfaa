"""The HTTP side: the FastAPI app factory (`app.py`), its routers (`routes/`), request and response
schemas, error handlers, middleware, API keys, disconnect handling and metrics.

Calls the engine only through `service.engine`'s public names (docs/engine-api.md).
"""
