"""rpcgen: compile ONC RPC / XDR interface definitions (.x) into Python and Cython."""
