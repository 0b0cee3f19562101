import Foundation

extension FTPTestServer {
    /// The pyftpdlib server: a script rather than `python -m pyftpdlib` because
    /// implicit TLS, throttling and per-folder permissions need handler classes.
    static let pyftpdlibScript = #"""
        import argparse, os, sys
        from pyftpdlib.authorizers import DummyAuthorizer
        from pyftpdlib.handlers import FTPHandler, ThrottledDTPHandler
        from pyftpdlib.servers import FTPServer

        p = argparse.ArgumentParser()
        p.add_argument("--port", type=int, required=True)
        p.add_argument("--root", required=True)
        p.add_argument("--user", required=True)
        p.add_argument("--password", required=True)
        p.add_argument("--tls", default="none", choices=["none", "explicit", "implicit"])
        p.add_argument("--cert")
        p.add_argument("--key")
        p.add_argument("--throttle", type=int)
        p.add_argument("--read-only", action="append", default=[])
        p.add_argument("--no-rename", action="store_true")
        p.add_argument("--max-per-ip", type=int, default=0)
        p.add_argument("--without", action="append", default=[])
        p.add_argument("--passive-address")
        p.add_argument("--empty-550", action="store_true")
        p.add_argument("--refuse-upload-data", action="store_true")
        a = p.parse_args()

        perm = "elradfmwMT"
        if a.no_rename:
            perm = perm.replace("f", "")
        auth = DummyAuthorizer()
        auth.add_user(a.user, a.password, a.root, perm=perm)
        for folder in a.read_only:
            path = os.path.join(a.root, folder.strip("/"))
            os.makedirs(path, exist_ok=True)
            auth.override_perm(a.user, path, perm="elr", recursive=True)

        handler = FTPHandler
        if a.tls != "none":
            from pyftpdlib.handlers import TLS_FTPHandler

            class TLSHandler(TLS_FTPHandler):
                certfile = a.cert
                keyfile = a.key
                tls_control_required = True
                tls_data_required = True

            handler = TLSHandler
            if a.tls == "implicit":
                class ImplicitTLSHandler(TLSHandler):
                    # TLS starts with the connection; the greeting follows the handshake.
                    def handle(self):
                        self.secure_connection(self.ssl_context)

                    def handle_ssl_established(self):
                        TLSHandler.handle(self)

                handler = ImplicitTLSHandler

        if a.throttle:
            class Throttled(ThrottledDTPHandler):
                read_limit = a.throttle
                write_limit = a.throttle

            handler.dtp_handler = Throttled

        if a.refuse_upload_data:
            import logging
            class Refusing(handler.dtp_handler):
                def handle_read(self):
                    try:
                        self.recv(self.ac_in_buffer_size)
                    except Exception:
                        pass
                    self._resp = ("425 Unable to build data connection: refused by the test server",
                                  logging.getLogger("pyftpdlib").info)
                    self.close()

                handle_read_event = handle_read

            handler.dtp_handler = Refusing

        base = handler

        class Scripted(base):
            proto_cmds = {k: v for k, v in base.proto_cmds.items() if k not in a.without}

            def listing_refused(self, path):
                if a.empty_550 and os.path.isdir(path) and not os.listdir(path):
                    self.respond("550 No files found.")
                    return True
                return False

            def ftp_LIST(self, path):
                if not self.listing_refused(path):
                    return base.ftp_LIST(self, path)

            def ftp_MLSD(self, path):
                if not self.listing_refused(path):
                    return base.ftp_MLSD(self, path)

        handler = Scripted
        if a.passive_address:
            handler.masquerade_address = a.passive_address
        handler.authorizer = auth
        handler.banner = "ferry test pyftpdlib"
        server = FTPServer(("127.0.0.1", a.port), handler)
        server.max_cons = 256
        server.max_cons_per_ip = a.max_per_ip
        server.serve_forever()
        """#
}
