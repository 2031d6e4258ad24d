"""What a kernel's attributes report: the PTX target that runs and a register count that never
makes an occupancy query refuse a block (CUB's host code reads both to pick and size launches)."""
import pytest

KERNEL = """
.version 9.0
.target {target}
.address_size 64
.visible .entry k(.param .u64 p)
{{
    .reg .b32 %r<300>;
    mov.u32 %r1, %tid.x;
    ret;
}}
"""


@pytest.mark.parametrize("target, version", [("sm_75", 75), ("sm_90a", 90), ("sm_120", 120)])
def test_ptx_version_is_the_target_of_the_running_ptx(runner, target, version):
    fn = runner.dev.load_module([KERNEL.format(target=target)]).get_function("k")
    attrs = fn.attributes()
    assert attrs["ptx_version"] == version
    assert attrs["binary_version"] == 75             # the emulated device


def test_register_count_lets_a_full_block_fit_an_sm(runner):
    fn = runner.dev.load_module([KERNEL.format(target="sm_120")]).get_function("k")
    attrs = fn.attributes()
    # 300 PTX registers declared; 1024 threads x the reported count must fit 65536 registers
    assert 0 < attrs["num_regs"] and attrs["num_regs"] * attrs["max_threads_per_block"] <= 65536
