"""LOADBACKEND imports module:Class only where the operator allowed it (--allow-backend-import)."""
from cricket.client.api import connect

from attacks import MARKED_BACKEND, load_backend_by_module
from hostile_peers import PLUGIN


def test_load_by_module_is_refused_without_the_option_and_imports_nothing(start_server, tmp_path):
    mark = tmp_path / "imported"
    server = start_server("--backend", PLUGIN, "--admin-token", "adm",
                          env={"CRICKET_TEST_IMPORT_MARK": str(mark)})
    load_backend_by_module(server, "adm", mark)
    with connect(server.address, token="adm") as admin:
        admin.load_backend("emu")                    # an entry-point name still loads
    with connect(server.address, backend="emu") as user:
        assert user.backend == "emu"
    assert not mark.exists()
    assert "needs --allow-backend-import" in server.output()


def test_load_by_module_works_with_the_option(start_server, tmp_path):
    mark = tmp_path / "imported"
    server = start_server("--backend", PLUGIN, "--admin-token", "adm", "--allow-backend-import",
                          env={"CRICKET_TEST_IMPORT_MARK": str(mark)})
    with connect(server.address, token="adm") as admin:
        admin.load_backend(MARKED_BACKEND)
    assert mark.read_text() == "imported\n"
    with connect(server.address, backend="marked") as user:
        assert user.backend == "marked"
        assert user.to_device(b"abc").to_host() == b"abc"
