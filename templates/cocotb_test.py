{% import "macros.txt" as m -%}
{% call m::header("#", gen) %}{% endcall %}
#
# A cocotb bench of {= b.module =} (the AXI wrapper of {= b.design =}) that drives it only through
# cocotbext-axi's AXI models (AxiLiteMaster, AxiStreamSource, AxiStreamSink) and
# compares every answer with fptgen's bit-accurate simulator, whose answers
# fptgen wrote beside it ({= b.data =}). Start your own verification
# from here (docs/verification.md):
#
#   fusesoc --cores-root . run --target sim {= b.vlnv =}
#
# or with any simulator cocotb supports, with COCOTB_TEST_MODULES={= b.py =},
# COCOTB_TOPLEVEL={= b.module =}, the RTL in rtl/ (include directory rtl/) and the
# working directory holding mem/ (the memory images $readmemh reads).
#
# Tests, each from a reset:
#   registers       the registers that describe the design; partial writes
#                   (WSTRB not 0b1111) refused with SLVERR, nothing changed
#   stream          every vector through s_axis/m_axis under random idle
#                   cycles and back-pressure, each output exact, TLAST every
#                   BATCH-th vector
#   weights         (a trainer) every weight read, written, read back and
#                   restored through the weight windows, with AR and AW
#                   transactions overlapping; partial weight writes refused
#   training        (a trainer) the buffer through s_axis_ld, a start, a
#                   weight read during the run refused at once while a STATUS
#                   read and a pause get through, up to PAUSES pauses in
#                   different groups or samples (at each, every weight read
#                   and compared with the simulator's committed parameters
#                   of the state it paused in, a write refused, the resume), the end: status, counters and
#                   every trained weight exact, then outputs on the new weights
# A protocol checker watches every channel the wrapper drives (VALID held,
# payload stable until READY; no response without a request; no X after
# reset): any violation fails the test that saw it.
#
# AXI4-Lite runs with idle cycles and back-pressure on its channels too.
# Environment: FPTGEN_BENCH_SEED (the handshake patterns, default 1),
# FPTGEN_BENCH_VECTORS (at most this many stream vectors).

import json
import logging
import os
import random
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge, with_timeout
from cocotbext.axi import (
    AxiLiteBus,
    AxiLiteMaster,
    AxiStreamBus,
    AxiStreamFrame,
    AxiStreamSink,
    AxiStreamSource,
)

DATA = json.loads((Path(__file__).resolve().parent / "{= b.data =}").read_text())
SEED = int(os.environ.get("FPTGEN_BENCH_SEED", "1"))
OKAY, SLVERR = 0, 2
PERIOD_NS = 10


# ---------------------------------------------------------------------------
# Packing (docs/hardware.md, "AXI wrapper"; driver/registers.md, "Streams")

def pack(codes, width):
    """Elements of `width` bits, element 0 in the least significant bits."""
    v = 0
    for e, c in enumerate(codes):
        v |= (c & ((1 << width) - 1)) << (e * width)
    return v


def transfers(bits, beat_bits, beats, bus_bits, per_beat):
    """A vector's bits as the stream's TDATA values: each beat of the
    design's stream as `per_beat` transfers of `bus_bits`, padding zero."""
    out = []
    for b in range(beats):
        beat = (bits >> (b * beat_bits)) & ((1 << beat_bits) - 1)
        for k in range(per_beat):
            out.append((beat >> (k * bus_bits)) & ((1 << bus_bits) - 1) if k * bus_bits < beat_bits else 0)
    return out


def to_bytes(words, bits):
    return b"".join(w.to_bytes(bits // 8, "little") for w in words)


def in_bytes(codes):
    s = DATA["stream"]
    bits = pack(codes, s["in_w"])
    return to_bytes(transfers(bits, s["core_in"], s["core_in_beats"], s["bus_in"], s["in_k"]), s["bus_in"])


def out_bytes(codes):
    s = DATA["stream"]
    bits = pack(codes, s["out_w"])
    return to_bytes(transfers(bits, s["core_out"], s["core_out_beats"], s["bus_out"], s["out_k"]), s["bus_out"])


def signed32(v):
    return v - (1 << 32) if v & (1 << 31) else v


# ---------------------------------------------------------------------------
# Protocol checker of the channels the wrapper drives

class Checker:
    def __init__(self, dut):
        self.dut = dut
        self.errors = []
        self.outstanding = {"w": 0, "r": 0}
        self.channels = [("m_axis", "m_axis_tvalid", "m_axis_tready", ["m_axis_tdata", "m_axis_tlast"]),
                         ("s_axil B", "s_axil_bvalid", "s_axil_bready", ["s_axil_bresp"]),
                         ("s_axil R", "s_axil_rvalid", "s_axil_rready", ["s_axil_rdata", "s_axil_rresp"])]
        self.held = {}

    @staticmethod
    def val(sig):
        s = str(sig.value)
        return None if any(c not in "01" for c in s) else int(s, 2)

    def error(self, msg):
        if len(self.errors) < 10:
            self.dut._log.error("protocol: %s", msg)
        self.errors.append(msg)

    async def run(self):
        d = self.dut
        while True:
            await RisingEdge(d.aclk)
            if self.val(d.aresetn) != 1:
                self.held.clear()
                self.outstanding = {"w": 0, "r": 0}
                continue
            for name, valid, ready, payload in self.channels:
                v = self.val(getattr(d, valid))
                r = self.val(getattr(d, ready))
                p = [self.val(getattr(d, x)) for x in payload]
                if v is None:
                    self.error(f"{valid} is X after reset")
                    continue
                if v and None in p:
                    self.error(f"{name}: payload X while VALID")
                prev = self.held.get(name)
                if prev is not None:
                    if not v:
                        self.error(f"{name}: VALID dropped before READY")
                    elif p != prev:
                        self.error(f"{name}: payload changed before READY ({prev} -> {p})")
                self.held[name] = p if v and not r else None
            # Responses only to requests: AW and W together, AR; then B, R.
            if self.val(d.s_axil_awvalid) and self.val(d.s_axil_awready):
                if not (self.val(d.s_axil_wvalid) and self.val(d.s_axil_wready)):
                    self.error("AW taken without W (the wrapper takes both together)")
                self.outstanding["w"] += 1
            if self.val(d.s_axil_arvalid) and self.val(d.s_axil_arready):
                self.outstanding["r"] += 1
            if self.val(d.s_axil_bvalid) and self.val(d.s_axil_bready):
                self.outstanding["w"] -= 1
                if self.outstanding["w"] < 0:
                    self.error("a write response without a write")
            if self.val(d.s_axil_rvalid) and self.val(d.s_axil_rready):
                self.outstanding["r"] -= 1
                if self.outstanding["r"] < 0:
                    self.error("a read response without a read")


# ---------------------------------------------------------------------------
# The bench

# Pauses at most in the training test.
PAUSES = 6


def committed_at(tr, it, group):
    """Per tensor, the codes the memories hold when training is paused at
    iteration `it`, group or sample `group`: the initial codes with the
    simulator's changes made before that state (its list is in order, each
    change after the state it names)."""
    codes = [list(t["codes"]) for t in DATA["tensors"]]
    for c_it, c_group, writes in tr["changes"]:
        if (c_it, c_group) == (it, group):
            return codes
        for k, i, code in writes:
            codes[k][i] = code
    assert (it, group) == (tr["iterations"], 0), f"paused at iteration {it}, group or sample {group}, a state the simulator's run never reached"
    return codes


def pauses(rng, permille):
    """A pause generator: True (idle or back-pressure) with this chance."""
    while True:
        yield rng.randrange(1000) < permille


class Bench:
    def __init__(self, dut, seed):
        self.dut = dut
        self.rng = random.Random(seed)
        cocotb.start_soon(Clock(dut.aclk, PERIOD_NS, unit="ns").start())
        self.axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.aclk, dut.aresetn, reset_active_level=False)
        self.src = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.aclk, dut.aresetn, reset_active_level=False)
        self.snk = AxiStreamSink(AxiStreamBus.from_prefix(dut, "m_axis"), dut.aclk, dut.aresetn, reset_active_level=False)
        self.ld = None
        if DATA["training"] is not None:
            self.ld = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis_ld"), dut.aclk, dut.aresetn, reset_active_level=False)
        for model in (self.axil.write_if, self.axil.read_if, self.src, self.snk) + ((self.ld,) if self.ld else ()):
            model.log.setLevel(logging.WARNING)  # not every transfer
        # AXI4-Lite with idle cycles on AW, W and AR and back-pressure on B
        # and R (20% each), so that the wrapper holds responses too.
        for channel in (self.axil.write_if.aw_channel, self.axil.write_if.w_channel, self.axil.write_if.b_channel,
                        self.axil.read_if.ar_channel, self.axil.read_if.r_channel):
            channel.set_pause_generator(pauses(self.rng, 200))
        self.checker = Checker(dut)
        self.offsets = DATA["offsets"]

    async def reset(self):
        d = self.dut
        d.aresetn.value = 0
        await ClockCycles(d.aclk, 8)
        d.aresetn.value = 1
        await ClockCycles(d.aclk, 2)
        cocotb.start_soon(self.checker.run())

    def done(self):
        assert not self.checker.errors, f"{len(self.checker.errors)} protocol error(s), first: {self.checker.errors[0]}"

    async def cycles(self, n):
        await ClockCycles(self.dut.aclk, n)

    # AXI4-Lite, each with a bound on its cycles
    async def read(self, addr, want_resp=OKAY, bound=2000):
        r = await with_timeout(self.axil.read(addr, 4), bound * PERIOD_NS, "ns")
        assert r.resp == want_resp, f"read 0x{addr:x}: RRESP {int(r.resp)}, expected {want_resp}"
        return int.from_bytes(r.data, "little")

    async def write(self, addr, value, want_resp=OKAY, bound=2000):
        w = await with_timeout(self.axil.write(addr, (value & 0xFFFFFFFF).to_bytes(4, "little")), bound * PERIOD_NS, "ns")
        assert w.resp == want_resp, f"write 0x{addr:x} = 0x{value:x}: BRESP {int(w.resp)}, expected {want_resp}"

    async def reg(self, name, **kw):
        return await self.read(self.offsets[name], **kw)

    # Streams
    async def stream(self, vectors, expected, idle, backpressure):
        """Sends `vectors` and checks every answer, frame by frame (TLAST
        every BATCH-th vector)."""
        batch = DATA["stream"]["batch"]
        n = len(vectors) - len(vectors) % batch
        self.src.set_pause_generator(pauses(self.rng, idle))
        self.snk.set_pause_generator(pauses(self.rng, backpressure))
        per = len(out_bytes(expected[0]))
        ii = DATA["cycles"]["ii"]
        bound = (n * (ii + 2) * 4 + DATA["cycles"]["latency"] + 1000) * 1000 // max(1, 1000 - max(idle, backpressure))

        async def send():
            for x in vectors[:n]:
                await self.src.send(AxiStreamFrame(in_bytes(x)))
            await self.src.wait()

        sender = cocotb.start_soon(send())
        for f in range(n // batch):
            frame = await with_timeout(self.snk.recv(), bound * PERIOD_NS, "ns")
            got = bytes(frame.tdata)
            assert len(got) == batch * per, f"frame {f}: {len(got)} bytes before TLAST, expected {batch * per} ({batch} vector(s))"
            for k in range(batch):
                v = f * batch + k
                want = out_bytes(expected[v])
                assert got[k * per:(k + 1) * per] == want, f"vector {v}: output {got[k * per:(k + 1) * per].hex()}, the simulator's {want.hex()} (inputs {vectors[v]})"
        await sender
        self.src.clear_pause_generator()
        self.snk.clear_pause_generator()
        return n

    # Weights
    @staticmethod
    def params(codes=None):
        """(tensor, address, code) of every parameter: the initial codes,
        or per tensor `codes` (word w, column c at w * cols + c; None for
        padding)."""
        for k, t in enumerate(DATA["tensors"]):
            for i, code in enumerate(t["codes"] if codes is None else codes[k]):
                if code is not None:
                    w, c = divmod(i, t["cols"])
                    yield t, t["base"] + (((w << t["col_bits"]) | c) * 4), code

    @staticmethod
    def as_read(t, code):
        """What a read of the parameter returns: its raw code sign- or
        zero-extended to 32 bits."""
        raw = code & ((1 << t["width"]) - 1)
        if t["signed"] and raw >> (t["width"] - 1):
            raw -= 1 << t["width"]
        return raw & 0xFFFFFFFF

    async def read_all(self, codes_of, what):
        """Every parameter read with overlapping reads (queued by the AXI
        model, answered one at a time by the wrapper) and compared."""
        pending = [(t, a, code, cocotb.start_soon(self.axil.read(a, 4))) for t, a, code in codes_of]
        for t, a, code, task in pending:
            r = await with_timeout(task, 100000 * PERIOD_NS, "ns")
            assert r.resp == OKAY, f"{what}: read of {t['name']} at 0x{a:x}: RRESP {int(r.resp)}"
            got = int.from_bytes(r.data, "little")
            want = self.as_read(t, code)
            assert got == want, f"{what}: {t['name']} at 0x{a:x} reads {signed32(got)}, the simulator's {signed32(want)}"
        return len(pending)

    async def write_all(self, codes_of):
        pending = [(a, cocotb.start_soon(self.axil.write(a, (code & 0xFFFFFFFF).to_bytes(4, "little")))) for _, a, code in codes_of]
        for a, task in pending:
            w = await with_timeout(task, 100000 * PERIOD_NS, "ns")
            assert w.resp == OKAY, f"write at 0x{a:x}: BRESP {int(w.resp)}"


def vectors_limit():
    n = len(DATA["vectors"])
    return min(n, int(os.environ.get("FPTGEN_BENCH_VECTORS", n)))


@cocotb.test()
async def registers(dut):
    """The describing registers; partial writes refused."""
    b = Bench(dut, SEED)
    await b.reset()
    if DATA["training_note"]:
        dut._log.info("no training test: %s", DATA["training_note"])
    for name, want in DATA["registers"].items():
        got = await b.reg(name)
        assert got == want, f"register {name} = 0x{got:x}, expected 0x{want:x}"
    # A one-byte write (WSTRB 0b0010) is refused and changes nothing.
    target = "ITERATIONS" if "ITERATIONS" in b.offsets else "BATCH"
    before = await b.reg(target)
    w = await b.axil.write(b.offsets[target] + 1, b"\xaa")
    assert w.resp == SLVERR, f"a one-byte write to {target}: BRESP {int(w.resp)}, expected SLVERR"
    assert await b.reg(target) == before, f"a refused partial write changed {target}"
    if target == "ITERATIONS":
        await b.write(b.offsets["ITERATIONS"], 0x12345678)
        assert await b.reg("ITERATIONS") == 0x12345678
    b.done()


@cocotb.test()
async def stream(dut):
    """Every vector, exact, under random idle cycles and back-pressure."""
    b = Bench(dut, SEED)
    await b.reset()
    n = vectors_limit()
    sent = await b.stream(DATA["vectors"][:n], DATA["expected"][:n], idle=300, backpressure=300)
    dut._log.info("stream: %d vectors exact", sent)
    b.done()


@cocotb.test(skip=not DATA["tensors"])
async def weights(dut):
    """Every weight read, written, read back and restored."""
    b = Bench(dut, SEED)
    await b.reset()
    params = list(b.params())
    n = await b.read_all(params, "initial weights")
    flipped = [(t, a, code ^ 1) for t, a, code in params]
    await b.write_all(flipped)
    await b.read_all(flipped, "weights written")
    # A partial write to a weight is refused and changes nothing.
    t, a, code = params[0]
    w = await b.axil.write(a + 1, b"\x5a")
    assert w.resp == SLVERR, f"a one-byte weight write: BRESP {int(w.resp)}, expected SLVERR"
    # The restore with register reads in flight alongside (AW and AR
    # transactions overlap; the wrapper serves one at a time).
    names = list(DATA["registers"]) * 4
    reads = [cocotb.start_soon(b.reg(name)) for name in names]
    await b.write_all(params)
    for name, task in zip(names, reads):
        got = await task
        assert got == DATA["registers"][name], f"register {name} read during weight writes = 0x{got:x}"
    await b.read_all(params, "weights restored")
    dut._log.info("weights: %d parameters read, written, read back and restored", n)
    b.done()


@cocotb.test(skip=DATA["training"] is None)
async def training(dut):
    """A training run with pauses, through the register map."""
    tr = DATA["training"]
    b = Bench(dut, SEED)
    await b.reset()
    # The model's weights (a reset keeps the memories: earlier tests or
    # runs may have changed them).
    await b.write_all(list(b.params()))
    st = DATA["status"]
    status = await b.reg("STATUS")
    assert status == st["idle"], f"STATUS after reset 0x{status:x}, expected 0x{st['idle']:x}"

    # The buffer through the sample-load stream: one transfer per word.
    words = []
    for x, t in zip(tr["samples"], tr["targets"]):
        bits = pack(x, DATA["stream"]["in_w"])
        for k in range(tr["words"]):
            word = (bits >> (k * tr["word_w"])) & ((1 << tr["word_w"]) - 1)
            if k == tr["words"] - 1:
                word |= pack(t, DATA["stream"]["out_w"]) << tr["target_at"]
            words.append(word)
    b.ld.set_pause_generator(pauses(b.rng, 300))
    await b.ld.send(AxiStreamFrame(to_bytes(words, tr["ld_bytes"] * 8)))
    await with_timeout(b.ld.wait(), (len(words) * 20 + 1000) * PERIOD_NS, "ns")
    await b.cycles(4)
    loaded = await b.reg("LOADED")
    assert loaded == len(words), f"LOADED = {loaded}, sent {len(words)} transfers"

    await b.write(b.offsets["ITERATIONS"], tr["iterations"])
    await b.write(b.offsets["CONTROL"], 1)  # start

    # During the run: a weight read is refused at once, and a STATUS read
    # and a pause issued with it get through (none waits for the run).
    t0, a0, _ = next(b.params())
    tasks = [cocotb.start_soon(b.axil.read(a0, 4)), cocotb.start_soon(b.axil.read(b.offsets["STATUS"], 4)),
             cocotb.start_soon(b.axil.write(b.offsets["CONTROL"], (2).to_bytes(4, "little")))]  # pause
    rd_w, rd_s, wr_p = [await with_timeout(task, 200 * PERIOD_NS, "ns") for task in tasks]
    assert rd_w.resp == SLVERR and int.from_bytes(rd_w.data, "little") == 0, \
        f"a weight read during the run: RRESP {int(rd_w.resp)} data {rd_w.data.hex()}, expected SLVERR and 0"
    s = int.from_bytes(rd_s.data, "little")
    assert rd_s.resp == OKAY and not s & st["done"], f"STATUS during the run: RRESP {int(rd_s.resp)}, 0x{s:x}"
    assert wr_p.resp == OKAY, f"the pause write: BRESP {int(wr_p.resp)}"

    bound = tr["cycles"] * 4 + 20000
    # Up to PAUSES pauses: the first asked for at the start, each further
    # one once the run has left the state of the last (ITERATION or GROUP
    # moved) and a random part of the run's cycles / (2 PAUSES) later, so
    # that they land in different groups (or samples) along the run.
    gap = max(1, tr["cycles"] // (2 * PAUSES))
    paused = 0
    while True:
        for _ in range(bound // 8):
            s = await b.reg("STATUS")
            if s & (st["paused"] | st["done"]):
                break
            await b.cycles(4)
        else:
            assert False, f"no pause within {bound} cycles (STATUS 0x{s:x})"
        if not s & st["paused"]:
            assert paused > 0, "training ended before the pause it was asked for landed"
            break  # the run ended before a later pause landed
        # Paused: weights readable, not writable; every weight is the
        # committed parameter of the state it paused in; a write is refused.
        assert s & st["readable"] and not s & st["writable"], f"STATUS while paused 0x{s:x}"
        it, group = await b.reg("ITERATION"), await b.reg("GROUP")
        await b.read_all(list(b.params(committed_at(tr, it, group))), f"weights while paused at iteration {it}, group or sample {group}")
        before = await b.read(a0)
        await b.write(a0, before ^ 1, want_resp=SLVERR)
        assert await b.read(a0) == before, "a weight write refused while paused changed the weight"
        paused += 1
        dut._log.info("training: paused at iteration %d, group or sample %d", it, group)
        await b.write(b.offsets["CONTROL"], 4)  # resume
        if paused == PAUSES:
            break
        for _ in range(bound // 8):
            s = await b.reg("STATUS")
            if s & st["done"] or (await b.reg("ITERATION"), await b.reg("GROUP")) != (it, group):
                break
            await b.cycles(4)
        await b.cycles(b.rng.randrange(gap))
        await b.write(b.offsets["CONTROL"], 2)  # pause

    for _ in range(bound // 8):
        s = await b.reg("STATUS")
        if s & st["done"]:
            break
        await b.cycles(8)
    else:
        assert False, f"training not done within {bound} cycles (STATUS 0x{s:x})"
    assert s == st["finished"], f"STATUS when done 0x{s:x}, expected 0x{st['finished']:x}"
    assert await b.reg("ITERATION") == tr["iterations"]
    for k, want in enumerate(tr["events"]):
        got = await b.reg(f"EVENTS{k}")
        assert got == want, f"EVENTS{k} = {got}, the simulator's {want}"
    if tr["last_loss"] is not None:
        got = await b.reg("LAST_LOSS")
        assert got == tr["last_loss"], f"LAST_LOSS = {got}, the simulator's {tr['last_loss']}"
    n = await b.read_all(list(b.params(tr["final"])), "trained weights")
    k = len(tr["expected_after"])
    await b.stream(DATA["vectors"][:k], tr["expected_after"], idle=200, backpressure=200)
    dut._log.info("training: %d iteration(s), %d pause(s), %d trained parameters and %d outputs exact", tr["iterations"], paused, n, k)
    b.done()

