"""Benchmarks of atento (`python -m bench`, see BENCHMARKS.md): batching, peers (PyTorch reference,
CTranslate2), the HTTP path, attention, int8, memory and the machine's matmul rate.

Imports model/ and export/ (to build and convert models) as well as service/ (the engine under test).
"""
