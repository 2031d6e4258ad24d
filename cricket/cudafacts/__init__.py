"""CUDA facts, stated once: error codes and messages, device attributes, occupancy.

A leaf package: it imports nothing of cricket, and the client, the server and the backends all
take these facts from here. The tables (``cudart_errors``, ``curesult``, ``device_attributes``, ``streams``) are
generated from the CUDA headers by ``python -m cricket.cudafacts.generate`` and checked in.
"""
