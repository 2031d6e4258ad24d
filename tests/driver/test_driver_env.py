"""The environment helpers for `cricket run`: the replacement goes in front of the application
once, and never reaches the server's environment."""
from __future__ import annotations

from pathlib import Path

from cricket.client import driver_env


def test_application_environment_puts_the_driver_first_once(tmp_path):
    d = tmp_path / "_driver"
    env = driver_env.application_environment({"LD_LIBRARY_PATH": f"/opt/a:{d}:/opt/b", "X": "1"}, d)
    assert env["LD_LIBRARY_PATH"] == f"{d}:/opt/a:/opt/b"
    assert env["X"] == "1"
    assert driver_env.application_environment({}, d)["LD_LIBRARY_PATH"] == str(d)


def test_server_environment_drops_the_driver_and_keeps_the_rest(tmp_path):
    d = tmp_path / "_driver"
    env = driver_env.server_environment({"LD_LIBRARY_PATH": f"{d}:/opt/a",
                                         "LD_PRELOAD": f"{d}/libcuda.so.1 /opt/x.so"}, d)
    assert env == {"LD_LIBRARY_PATH": "/opt/a", "LD_PRELOAD": "/opt/x.so"}
    assert driver_env.server_environment({"LD_LIBRARY_PATH": str(d)}, d) == {}


def test_available_needs_the_library_and_its_link(tmp_path):
    assert not driver_env.available(tmp_path)
    (tmp_path / "libcricket-cuda.so").write_bytes(b"")
    assert not driver_env.available(tmp_path)
    (tmp_path / "libcuda.so.1").symlink_to("libcricket-cuda.so")
    assert driver_env.available(tmp_path)
    assert driver_env.DRIVER_DIR == Path(driver_env.__file__).resolve().parents[1] / "_driver"
