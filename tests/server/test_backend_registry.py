"""The backend registry: loading by type and by module:Class, one per type, clear failures."""
import pytest

from cricket.backends.registry import (BackendLoadError, BackendRegistry, known_backends,
                                       parse_backend_option, resolve)
from cricket.backends.cuda import CudaBackend

PLUGIN = "plugin_backend:HostMemoryBackend"


def test_builtin_backends_are_known_without_installed_entry_points():
    known = known_backends()
    assert known["emu"] == "cricket.backends.emu_backend:EmuBackend"
    assert known["cuda"] == "cricket.backends.cuda:CudaBackend"


def test_third_party_class_loads_by_module_and_class_under_its_type_name():
    reg = BackendRegistry()
    backend = reg.load(PLUGIN, str(1 << 20))
    assert reg.get("hostmem") is backend
    assert reg.default == "hostmem"
    assert backend.devices()[0].total_memory == 1 << 20


def test_second_load_of_a_loaded_type_is_refused_and_keeps_the_first():
    reg = BackendRegistry()
    first = reg.load(PLUGIN)
    with pytest.raises(BackendLoadError, match="already loaded.*no unloading"):
        reg.load(PLUGIN, "123")
    assert reg.get("hostmem") is first


def test_plugin_that_cannot_be_imported_is_reported_with_the_reason():
    reg = BackendRegistry()
    with pytest.raises(BackendLoadError, match="cannot import broken_plugin.*cricket_dependency_that_does_not_exist"):
        reg.load("broken_plugin:Backend")
    assert reg.loaded() == {}


def test_plugin_whose_init_fails_is_reported_and_others_stay_loaded():
    reg = BackendRegistry()
    reg.load(PLUGIN)
    with pytest.raises(BackendLoadError, match="failed to initialise.*frobnicator"):
        reg.load("plugin_backend:FailingInitBackend")
    assert list(reg.loaded()) == ["hostmem"]


def test_class_that_is_no_backend_is_refused():
    with pytest.raises(BackendLoadError, match="not a subclass"):
        resolve("plugin_backend:NotABackend")
    with pytest.raises(BackendLoadError, match="has no Missing"):
        resolve("plugin_backend:Missing")


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(BackendLoadError, match="unknown backend 'nosuch'.*cuda.*emu"):
        resolve("nosuch")


def test_get_of_a_type_not_loaded_says_what_is_loaded():
    reg = BackendRegistry()
    reg.load(PLUGIN)
    with pytest.raises(KeyError, match="'emu' is not loaded.*hostmem"):
        reg.get("emu")


def test_status_lists_known_and_loaded_backends_with_availability():
    reg = BackendRegistry()
    reg.load(PLUGIN)
    rows = {r.type: r for r in reg.status()}
    assert rows["hostmem"].loaded and rows["hostmem"].available
    assert not rows["cuda"].loaded
    if CudaBackend.unavailable_reason():
        assert not rows["cuda"].available and rows["cuda"].reason


def test_backend_option_parses_name_and_spec():
    assert parse_backend_option("emu") == ("emu", "")
    assert parse_backend_option("cuda=0,1") == ("cuda", "0,1")
    assert parse_backend_option("pkg.mod:Cls=a=b") == ("pkg.mod:Cls", "a=b")
    with pytest.raises(ValueError):
        parse_backend_option("=x")
