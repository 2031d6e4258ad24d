"""The cricket server: sessions, resource tables, dispatch of cricket.x procedures to a backend."""
