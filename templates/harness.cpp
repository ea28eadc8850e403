{% import "macros.txt" as m -%}
/*
{% call m::header(" *", gen) %}{% endcall %}
 *
 * Verilator co-simulation harness for {= n.name =}.
 *
 * usage: V{= n.name =} INPUTS.hex EXPECTED.hex SEED [TRACE.vcd]
 *   INPUTS.hex    one input vector per line, hex, element k at bits [k*{= n.x.width =} +: {= n.x.width =}]
 *   EXPECTED.hex  the simulator's output for each vector, same layout ({= n.y.width =}-bit elements)
 *
 * A vector streams as kInBeats beats of kInBeatBits bits (an image: one
 * pixel per beat, beat b = bits [b*kInBeatBits +: kInBeatBits] of the
 * vector), an output as kOutBeats beats.
 *
 * Phase A streams the vectors with in_valid and out_ready held high (cycling
 * through them until at least kTimingVectors have passed, so the pipeline
 * fills) and measures latency (edges from accepting the first beat of vector
 * 0 to the last beat of its output being valid) and the initiation interval
 * (edges between the last beats of successive outputs, which must be
 * constant in the second half of the run). Phase B resets and streams every
 * vector again with random input gaps and random output back-pressure
 * (xorshift64 seeded with SEED). Every output beat of both phases is
 * compared bit for bit with EXPECTED; the first difference stops the run
 * with the vector, the beat, the output element and the bits named. The
 * last line is
 *   RESULT vectors=N mismatches=M ii=I latency=L
 */

#include "harness_common.h"

using namespace harness;

namespace {

constexpr int kInElems = {= n.inputs =};
constexpr int kInW = {= n.x.width =};
constexpr int kOutElems = {= n.outputs =};
constexpr int kOutW = {= n.y.width =};
constexpr int kOutBits = kOutElems * kOutW;
constexpr int kInBeats = {= n.in_port_beats =};
constexpr int kInBeatBits = kInElems / kInBeats * kInW;
constexpr int kOutBeats = {= n.out_beats =};
constexpr int kOutBeatElems = kOutElems / kOutBeats;
constexpr int kOutBeatBits = kOutBeatElems * kOutW;
// Enough vectors for the interval between outputs to be constant in the
// second half of phase A (the generator's cycle model finds the number).
constexpr size_t kTimingVectors = {= n.timing_vectors =};

// Reset with the streams idle.
void reset(Sim& sim) {
    sim.top->in_valid = 0;
    sim.top->out_ready = 0;
    sim.reset();
    sim.top->eval();
}

// Beat b of every vector.
std::vector<std::vector<Words>> beats_of(const std::vector<Words>& vs, int beats, int bits) {
    std::vector<std::vector<Words>> out;
    for (const Words& v : vs) {
        std::vector<Words> b;
        for (int k = 0; k < beats; ++k) b.push_back(slice(v, k * bits, bits));
        out.push_back(b);
    }
    return out;
}

[[noreturn]] void mismatch(char phase, size_t vec, int beat, const Words& got, const Words& want) {
    for (int e = 0; e < kOutBeatElems; ++e) {
        const uint64_t g = field(got, e * kOutW, kOutW);
        const uint64_t x = field(want, e * kOutW, kOutW);
        if (g != x) {
            std::printf("MISMATCH phase=%c vector=%zu beat=%d output=%d signal=out_data[%d:%d] got=0x%llx expected=0x%llx\n",
                        phase, vec, beat, beat * kOutBeatElems + e, e * kOutW + kOutW - 1, e * kOutW,
                        static_cast<unsigned long long>(g), static_cast<unsigned long long>(x));
            std::printf("RESULT vectors=%zu mismatches=1 ii=0 latency=0\n", vec);
            std::exit(1);
        }
    }
    std::exit(4);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s INPUTS.hex EXPECTED.hex SEED [TRACE.vcd]\n", argv[0]);
        return 3;
    }
    const std::vector<Words> inputs = read_vectors(argv[1], kInElems * kInW);
    const std::vector<Words> expected = read_vectors(argv[2], kOutBits);
    Rng rng(std::strtoull(argv[3], nullptr, 10));
    if (inputs.size() != expected.size() || inputs.empty()) {
        std::fprintf(stderr, "ERROR %zu input vectors but %zu expected outputs\n", inputs.size(), expected.size());
        return 3;
    }
    const size_t n = inputs.size();
    const auto in_beats = beats_of(inputs, kInBeats, kInBeatBits);
    const auto out_beats = beats_of(expected, kOutBeats, kOutBeatBits);

    Sim sim(argc, argv);
    if (argc > 4) sim.trace(argv[4]);
{%- for p in tied_inputs %}
    sim.top->{= p =} = 0;
{%- endfor %}
    sim.top->eval();

    const uint64_t limit = (n + kTimingVectors + 16) * ({= n.ii =} + {= n.latency =} + 4) * 8 + 1000;

    // Phase A: full rate, outputs always ready.
    reset(sim);
    const size_t n_a = n > kTimingVectors ? n : kTimingVectors;
    size_t sent = 0, recv = 0;  // beats
    int64_t first_accept = -1;
    std::vector<uint64_t> valid_at;  // edge after which output k's last beat became valid
    sim.top->out_ready = 1;
    while (recv < n_a * kOutBeats) {
        if (sim.cycle > limit) {
            std::printf("TIMEOUT phase=A after %llu cycles: %zu of %zu output beats\n", static_cast<unsigned long long>(sim.cycle), recv, n_a * kOutBeats);
            return 2;
        }
        sim.top->in_valid = sent < n_a * kInBeats;
        if (sent < n_a * kInBeats) set_sig(sim.top->in_data, in_beats[(sent / kInBeats) % n][sent % kInBeats]);
        sim.top->eval();
        const bool take_in = sim.top->in_valid && sim.top->in_ready;
        // out_ready is high, so every cycle with out_valid is one output beat.
        if (sim.top->out_valid) {
            const size_t v = (recv / kOutBeats) % n;
            const int b = static_cast<int>(recv % kOutBeats);
            if (b == kOutBeats - 1) valid_at.push_back(sim.cycle);
            const Words got = get_sig(sim.top->out_data, kOutBeatBits);
            if (got != out_beats[v][b]) mismatch('A', v, b, got, out_beats[v][b]);
            ++recv;
        }
        sim.edge();
        if (take_in) {
            if (first_accept < 0) first_accept = static_cast<int64_t>(sim.cycle);
            ++sent;
        }
    }
    const long long latency = static_cast<long long>(valid_at[0]) - first_accept;
    long long ii = 0;
    bool steady = true;
    // Intervals in the second half of the run: the pipeline is full by then.
    for (size_t k = valid_at.size() / 2 + 1; k < valid_at.size(); ++k) {
        const long long d = static_cast<long long>(valid_at[k] - valid_at[k - 1]);
        if (ii == 0) ii = d;
        if (d != ii) steady = false;
    }
    if (!steady) {
        std::printf("UNSTEADY phase=A output intervals vary:");
        for (size_t k = 1; k < valid_at.size(); ++k) std::printf(" %llu", static_cast<unsigned long long>(valid_at[k] - valid_at[k - 1]));
        std::printf("\n");
        ii = -1;
    }

    // Phase B: random input gaps and output back-pressure.
    reset(sim);
    sent = 0;
    recv = 0;
    bool presenting = false;
    const uint64_t start = sim.cycle;
    while (recv < n * kOutBeats) {
        if (sim.cycle - start > limit * 4) {
            std::printf("TIMEOUT phase=B after %llu cycles: %zu of %zu output beats\n", static_cast<unsigned long long>(sim.cycle - start), recv, n * kOutBeats);
            return 2;
        }
        // A presented beat stays valid and unchanged until accepted.
        if (!presenting && sent < n * kInBeats && rng.chance(70)) presenting = true;
        sim.top->in_valid = presenting;
        if (presenting) set_sig(sim.top->in_data, in_beats[sent / kInBeats][sent % kInBeats]);
        sim.top->out_ready = rng.chance(50);
        sim.top->eval();
        const bool take_in = sim.top->in_valid && sim.top->in_ready;
        if (sim.top->out_valid && sim.top->out_ready) {
            const size_t v = recv / kOutBeats;
            const int b = static_cast<int>(recv % kOutBeats);
            const Words got = get_sig(sim.top->out_data, kOutBeatBits);
            if (got != out_beats[v][b]) mismatch('B', v, b, got, out_beats[v][b]);
            ++recv;
        }
        sim.edge();
        if (take_in) {
            ++sent;
            presenting = false;
        }
    }
    sim.finish();
    std::printf("RESULT vectors=%zu mismatches=0 ii=%lld latency=%lld\n", n, ii, latency);
    return 0;
}
