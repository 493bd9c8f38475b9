"""TLS of the server listeners: settings (``svc.tls.config``), contexts with Go's
client-auth policies and certificate rotation (``svc.tls.context``), and the transport that
serves HTTP and WebSocket over them (``svc.tls.protocol``).

Nothing is imported here: the configuration imports ``svc.tls.config`` only, so commands
that never listen (``svc backfill``) do not load OpenSSL.
"""
