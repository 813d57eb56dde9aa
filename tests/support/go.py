"""A go project whose dependency comes from a module proxy on loopback, for the
tests that gate go's modules from a layer."""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import threading
import zipfile
from pathlib import Path

HAS_GO = shutil.which("go") is not None

GO_MOD = b"module example.com/proj\n\ngo 1.19\n\nrequire example.com/tiny v1.0.0\n"

LIBRARY = 'package proj\n\nimport "example.com/tiny"\n\nfunc Double() int { return 2 * tiny.Answer() }\n'

TEST = 'package proj\n\nimport "testing"\n\nfunc TestDouble(t *testing.T) {\n\tif Double() != 84 {\n\t\tt.Fatal("want 84")\n\t}\n}\n'


class Proxy:
    """A Go module proxy (GOPROXY protocol) on the host's loopback,
    counting the module zips it serves."""

    def __init__(self, folder: Path, host: str = "127.0.0.1"):
        self.zips = 0
        proxy = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            disable_nagle_algorithm = True

            def do_GET(self) -> None:
                if self.path.endswith(".zip"):
                    proxy.zips += 1
                super().do_GET()

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
                return None

        self.server = http.server.ThreadingHTTPServer((host, 0), functools.partial(Handler, directory=str(folder)))
        self.server.request_queue_size = 64
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://{host}:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


def module_proxy(root: Path) -> Path:
    """example.com/tiny v1.0.0 laid out as a proxy serves it."""
    at = root / "proxy" / "example.com" / "tiny" / "@v"
    at.mkdir(parents=True)
    mod = "module example.com/tiny\n\ngo 1.19\n"
    (at / "list").write_text("v1.0.0\n")
    (at / "v1.0.0.info").write_text('{"Version":"v1.0.0","Time":"2026-01-01T00:00:00Z"}')
    (at / "v1.0.0.mod").write_text(mod)
    with zipfile.ZipFile(at / "v1.0.0.zip", "w") as archive:
        archive.writestr("example.com/tiny@v1.0.0/go.mod", mod)
        archive.writestr("example.com/tiny@v1.0.0/tiny.go", "package tiny\n\nfunc Answer() int { return 42 }\n")
    return root / "proxy"


def module_and_sum(root: Path) -> tuple[Path, bytes]:
    """The module laid out as a proxy serves it, and go.sum as go itself
    writes it for the project."""
    folder = module_proxy(root)
    (root / "proj").mkdir()
    (root / "proj" / "go.mod").write_bytes(GO_MOD)
    (root / "proj" / "proj.go").write_text(LIBRARY)
    env = {
        **os.environ,
        "GOPROXY": f"file://{folder}",
        "GOSUMDB": "off",
        "GOFLAGS": "-mod=mod",
        "GOMODCACHE": str(root / "modcache"),
        "GOPATH": str(root / "gopath"),
        "GOTOOLCHAIN": "local",
    }
    subprocess.run(["go", "mod", "tidy"], cwd=root / "proj", env=env, check=True, capture_output=True)
    subprocess.run(["chmod", "-R", "u+w", str(root / "modcache")], check=True)
    return folder, (root / "proj" / "go.sum").read_bytes()


def go_base(go_sum: bytes) -> dict[str, str]:
    return {"go.mod": GO_MOD.decode(), "go.sum": go_sum.decode(), "proj.go": LIBRARY, "proj_test.go": TEST}
