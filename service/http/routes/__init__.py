"""The routers, one per concern: generate (TGI's routes), attention, health (probes and /metrics), info
(and the viewer's pages). Each translates HTTP bodies to engine calls; status codes are left to
service/http/error_handlers.py.
"""
