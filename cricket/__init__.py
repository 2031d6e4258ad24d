"""cricket: CUDA API remoting over ONC RPC."""
__version__ = "0.1.0"
