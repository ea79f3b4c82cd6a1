"""Loopback servers for the index tests: a raw TCP server with a fixed reply, and a port nothing listens on."""

from __future__ import annotations

import socket
import threading


class RawServer:
    """A loopback TCP server that answers every connection with fixed bytes (or nothing), then closes."""

    def __init__(self, reply: bytes | None) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.reply = reply
        self.accepted = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        self.sock.settimeout(0.1)
        held = []
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            if self.reply is None:
                held.append(conn)  # silent: keep the connection open, say nothing
                continue
            conn.recv(65536)
            conn.sendall(self.reply)
            conn.close()
        for conn in held:
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.sock.close()


TRUNCATED = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5000\r\nConnection: close\r\n\r\n"
             b"<!DOCTYPE html><html><body><a href=\"/whl/cu13")


def closed_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


class TrickleServer:
    """A loopback HTTP server that sends its reply ``chunk`` bytes every ``interval`` seconds: one byte is a
    "slowloris" server (each read returns well within any socket timeout, so only a total deadline ends the fetch),
    kilobytes a slow link. ``head`` is sent first in one piece (empty: the status line itself trickles)."""

    def __init__(self, head: bytes, trickle: bytes, interval: float = 0.2, chunk: int = 1) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.head, self.trickle, self.interval, self.chunk = head, trickle, interval, chunk
        self.accepted = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        self.sock.settimeout(0.1)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        try:
            conn.recv(65536)
            if self.head:
                conn.sendall(self.head)
            for i in range(0, len(self.trickle), self.chunk):
                if self.stop.wait(self.interval):
                    break
                conn.sendall(self.trickle[i:i + self.chunk])
        except OSError:
            pass
        finally:
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.sock.close()




class DirectoryServer:
    """A loopback HTTP server of a directory's files (a static PEP 503 tree), on a port of its own, in a thread."""

    def __init__(self, root: str) -> None:
        import functools
        from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

        class Quiet(SimpleHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # the test's output stays its own
                pass

        self.root = root
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=root))
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str = "") -> str:
        return f"http://127.0.0.1:{self.port}/{path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()
