{% import "macros.txt" as m -%}
{%- let t = a.trainer.as_ref().unwrap() -%}
/*
{% call m::header(" *", gen) %}{% endcall %}
 *
 * Verilator harness of {= n.name =}'s on-chip training through its AXI wrapper
 * {= a.module =} (fptgen cosim --axi --train). Everything goes through the
 * register map with the generated C driver (driver/{= a.core =}_driver.c) on
 * a simulated AXI4-Lite bus, and through the AXI4-Stream ports.
 *
 * usage: V{= a.module =} BUFFER.hex REQUESTS.hex SEED ITERATIONS INTERRUPT_PERMILLE LOG
 *   BUFFER.hex    {= t.m =} lines "X T": a sample's input vector and target vector, hex
 *   REQUESTS.hex  input vectors for inference requests, one per line
 *
 * 1. writes every trainable tensor from sim/run/<image>.load (memory-image
 *    format) through its weight window, reads it back and compares;
 * 2. loads the buffer through s_axis_ld (the driver packs the samples;
 *    random TVALID gaps) and checks LOADED;
 * 3. sends a few requests (s_axis, m_axis with random TREADY) before the
 *    start, starts ITERATIONS iterations, and until done: with
 *    INTERRUPT_PERMILLE > 0 presents requests with that chance per cycle
 *    (while training runs only if an answer is one m_axis transfer, else
 *    only while it is paused), pauses (CONTROL; the first time as soon as
 *    a poll sees group 1 or a later iteration, so that the committed
 *    parameters include an update; later only once the run has left the
 *    safe point of the last pause) now and then and resumes; polls STATUS, ITERATION
 *    and GROUP. A request accepted during training is tagged with the
 *    ITERATION and GROUP of the next poll: until then TREADY is held low,
 *    so the trainer waits at the safe point where it served the request
 *    (it continues only when every answer has left) and the poll reads
 *    that point's state. At every pause it reads every trainable tensor
 *    through the windows (the committed parameters), writing
 *    sim/run/mem/<image>.pause<n> (with the driver's read_tensor_paused,
 *    which must not resume), and at the first one checks that a weight
 *    write is refused (SLVERR) and changes nothing; after it, once, the
 *    driver's read_tensor_paused while the run goes on must pause, read and
 *    resume it (a hook on the bus, just before the driver's resume, polls
 *    the state that pause landed on and reads the other tensors, so that
 *    it is logged and compared as a pause like the others). Without
 *    interruptions it reads a weight right after the start, which the
 *    wrapper must hold until training is done;
 * 4. sends a few requests after the end, reads the status registers and
 *    every trainable tensor, writing sim/run/mem/<image>.final (as the
 *    memories' dump in sim/train_harness.cpp).
 * LOG lines for fptgen to compare with the simulator:
 *   A request iteration group output        an answer before the start (0 0)
 *                                           or after the end (ITERATIONS 0), hex
 *   T request iteration group output        an answer during training, tagged
 *                                           with the state that served it
 *   K n iteration group                     pause n: the tensors read then are
 *                                           in sim/run/mem/<image>.pause<n>
 *                                           (also the driver's pause, after Q)
 *   H code                                  the weight read during training
 *   P cycle / R cycle                       paused / resumed (STATUS)
 *   Q cycle                                 the driver's read_tensor_paused returned
 *   REG name value                          a register after the end
 * The last line of stdout is RESULT cycles=C requests=R.
 */

#include "harness_common.h"
#include "axi_lite.h"

#include <cstring>
#include <deque>
#include <tuple>
#include <utility>

using namespace harness;

namespace {

constexpr int kInBits = {= n.in_bits() =};
constexpr int kOutBits = {= n.out_bits() =};
constexpr int kInW = {= a.in_w =};
constexpr int kOutW = {= a.out_w =};
constexpr int kInSigned = {= a.in_signed =};
constexpr int kOutSigned = {= a.out_signed =};
constexpr int kInPer = {= a.in_k =};      // s_axis transfers per vector
constexpr int kOutPer = {= a.out_k =};    // m_axis transfers per vector
constexpr int kInBus = {= a.bus_in =};
constexpr int kOutBus = {= a.bus_out =};
constexpr int kLdBits = {= t.ld_bus =};

// The trainable tensors: memory image, words, columns, column bits.
struct Tensor {
    const char* file;
    uint32_t depth, cols, width, base;
};
const Tensor kTensors[] = {
{%- for w in t.windows %}
    {"{= w.file =}", {= w.depth =}, {= w.mem_cols =}, {= w.t.width =}, {= a.upper() =}_{= w.upper() =}_BASE},
{%- endfor %}
};
constexpr unsigned kTensorCount = sizeof kTensors / sizeof kTensors[0];

// Writes tensor k's codes (word-major) as a memory image, one word per
// line in hex (the format of the $readmemh images and of the dumps).
bool write_image(const Tensor& x, const std::vector<int32_t>& codes, const std::string& path) {
    FILE* f = std::fopen(path.c_str(), "w");
    if (!f) {
        std::fprintf(stderr, "ERROR cannot write %s\n", path.c_str());
        return false;
    }
    for (uint32_t w = 0; w < x.depth; ++w) {
        const int bits = static_cast<int>(x.cols * x.width);
        Words word((bits + 31) / 32, 0);
        for (uint32_t c = 0; c < x.cols; ++c) {
            for (uint32_t b = 0; b < x.width; ++b) {
                const int p = static_cast<int>(c * x.width + b);
                if ((static_cast<uint32_t>(codes[w * x.cols + c]) >> b) & 1u) word[p / 32] |= 1u << (p % 32);
            }
        }
        std::fprintf(f, "%s\n", to_hex(word, bits).c_str());
    }
    std::fclose(f);
    return true;
}

int32_t code_of(const Words& v, int e, int w, int is_signed) {
    uint64_t c = field(v, e * w, w);
    if (is_signed && ((c >> (w - 1)) & 1)) c |= ~0ull << w;
    return static_cast<int32_t>(c);
}

}  // namespace

int main(int argc, char** argv) {
    TrainArgs args;
    if (!parse_train_args(argc, argv, {= t.m =}, kInBits, kOutBits, args)) return 3;
    const std::vector<std::pair<Words, Words>>& buffer = args.buffer;
    const std::vector<Words>& requests = args.requests;
    Rng rng(args.seed);
    const uint32_t iterations = args.iterations;
    const int interrupt = args.interrupt;
    FILE* log = args.log;

    Sim sim(argc, argv);
    Top* top = sim.top;
    const uint64_t& cycle = sim.cycle;
    axi::idle(sim);
    top->s_axis_tvalid = 0;
    top->s_axis_tlast = 0;
    top->m_axis_tready = 0;
    top->s_axis_ld_tvalid = 0;
    top->s_axis_ld_tlast = 0;
    sim.reset();

    // The streams, one cycle at a time: requests as kInPer transfers each,
    // answers gathered from kOutPer transfers.
    // Requests accepted, not yet answered: index, the poll generation at
    // acceptance, and the state that served it once a poll has tagged it.
    struct Flight {
        size_t request;
        uint64_t gen;
        bool tagged;
        bool during;                   // accepted during training
        uint32_t it, g;
    };
    std::deque<Flight> inflight;
    size_t untagged = 0;               // of those, not yet tagged
    uint64_t poll_gen = 0;             // polls begun so far
    uint32_t polled_it = 0, polled_g = 0;  // the state outside training (before the start, after the end)
    size_t next_req = 0;
    int in_part = 0, out_part = 0;
    bool presenting = false;
    Words answer((kOutBits + 31) / 32, 0);
    int permille = 0;     // chance per cycle of a request
    bool training = false;  // answers are tagged by the next poll
    auto tick = [&]() {
        if (!presenting && permille > 0 && rng.permille(permille)) presenting = true;
        top->s_axis_tvalid = presenting;
        if (presenting) {
            const Words& v = requests[next_req % requests.size()];
            const int lo = in_part * kInBus;
            Words tr = slice(v, lo, kInBits - lo < kInBus ? kInBits - lo : kInBus);
            tr.resize((kInBus + 31) / 32, 0);
            set_sig(top->s_axis_tdata, tr);
            top->s_axis_tlast = in_part == kInPer - 1;
        }
        // An answer waits until its request is tagged (see the top).
        top->m_axis_tready = untagged == 0 && rng.chance(70);
        top->eval();
        if (top->m_axis_tvalid && top->m_axis_tready) {
            const Words tr = get_sig(top->m_axis_tdata, kOutBus);
            for (int b = 0; b < kOutBus && out_part * kOutBus + b < kOutBits; ++b) {
                const int p = out_part * kOutBus + b;
                if (field(tr, b, 1)) answer[p / 32] |= 1u << (p % 32);
            }
            if (++out_part == kOutPer) {
                out_part = 0;
                if (inflight.empty()) {
                    std::printf("ERROR an answer without a request at cycle %llu\n", static_cast<unsigned long long>(cycle));
                    std::exit(1);
                }
                const Flight f = inflight.front();
                inflight.pop_front();
                if (!f.tagged) {
                    std::printf("ERROR the answer to request %zu left before its request was tagged at cycle %llu\n", f.request,
                                static_cast<unsigned long long>(cycle));
                    std::exit(1);
                }
                std::fprintf(log, "%c %zu %u %u %s\n", f.during ? 'T' : 'A', f.request, f.it, f.g, to_hex(answer, kOutBits).c_str());
                answer.assign(answer.size(), 0);
            }
        }
        if (top->s_axis_tvalid && top->s_axis_tready) {
            if (++in_part == kInPer) {
                in_part = 0;
                inflight.push_back(Flight{next_req % requests.size(), poll_gen, !training, training, polled_it, polled_g});
                if (training) ++untagged;
                ++next_req;
                presenting = false;
            }
        }
    };
    auto run = [&](int cycles) {
        for (int i = 0; i < cycles; ++i) {
            tick();
            sim.edge();
        }
    };
    axi::Bus bus{&sim, tick};
    {= a.core =}_dev dev = axi::device(bus);
    if ({= a.core =}_check(&dev) != 0) {
        std::printf("MISMATCH signal=s_axil_rdata: the ID, VERSION, INPUTS or OUTPUTS register differs from the driver's header\n");
        return 1;
    }

    // 1. The initial weights, written and read back.
    for (unsigned k = 0; k < kTensorCount; ++k) {
        const Tensor& x = kTensors[k];
        const std::string path = std::string("sim/run/") + (std::strrchr(x.file, '/') + 1) + ".load";
        const std::vector<Words> image = read_vectors(path.c_str(), static_cast<int>(x.cols * x.width));
        if (image.size() != x.depth) {
            std::fprintf(stderr, "ERROR %s has %zu words, expected %u\n", path.c_str(), image.size(), x.depth);
            return 3;
        }
        std::vector<int32_t> codes;
        for (uint32_t w = 0; w < x.depth; ++w) {
            for (uint32_t c = 0; c < x.cols; ++c) codes.push_back(static_cast<int32_t>(field(image[w], static_cast<int>(c * x.width), static_cast<int>(x.width))));
        }
        {= a.core =}_write_tensor(&dev, k, codes.data());
        std::vector<int32_t> back({= a.core =}_tensor_size(k));
        {= a.core =}_read_tensor(&dev, k, back.data());
        const uint32_t mask = x.width >= 32 ? 0xffffffffu : (1u << x.width) - 1;
        for (size_t i = 0; i < codes.size(); ++i) {
            if ((static_cast<uint32_t>(back[i]) & mask) != (static_cast<uint32_t>(codes[i]) & mask)) {
                std::printf("MISMATCH signal=s_axil_rdata tensor=%u (%s) word=%zu column=%zu read 0x%x after writing 0x%x\n", k, x.file,
                            i / x.cols, i % x.cols, static_cast<uint32_t>(back[i]) & mask, static_cast<uint32_t>(codes[i]) & mask);
                return 1;
            }
        }
    }

    // 2. The buffer, through s_axis_ld with random gaps.
    std::vector<int32_t> xs, ts;
    for (const auto& s : buffer) {
        for (int e = 0; e < {= a.inputs =}; ++e) xs.push_back(code_of(s.first, e, kInW, kInSigned));
        for (int e = 0; e < {= a.outputs =}; ++e) ts.push_back(code_of(s.second, e, kOutW, kOutSigned));
    }
    std::vector<uint8_t> scratch(buffer.size() * {= a.upper() =}_LD_WORDS * {= a.upper() =}_LD_BYTES);
    struct Loader {
        Sim* sim;
        Rng* rng;
        std::function<void()>* tick;
    } loader{&sim, &rng, &bus.tick};
    auto send = [](const uint8_t* data, size_t bytes, void* ctx) -> int {
        Loader* l = static_cast<Loader*>(ctx);
        Top* t = l->sim->top;
        const size_t n = bytes / {= a.upper() =}_LD_BYTES;
        for (size_t k = 0; k < n;) {
            Words w((kLdBits + 31) / 32, 0);
            for (int b = 0; b < kLdBits; ++b) {
                if ((data[k * {= a.upper() =}_LD_BYTES + b / 8] >> (b % 8)) & 1) w[b / 32] |= 1u << (b % 32);
            }
            set_sig(t->s_axis_ld_tdata, w);
            t->s_axis_ld_tlast = (k + 1) % {= a.upper() =}_LD_WORDS == 0;
            t->s_axis_ld_tvalid = l->rng->permille(700);
            (*l->tick)();
            const bool fire = t->s_axis_ld_tvalid && t->s_axis_ld_tready;
            l->sim->edge();
            if (fire) ++k;
        }
        t->s_axis_ld_tvalid = 0;
        return 0;
    };
    if ({= a.core =}_load_buffer(&dev, xs.data(), ts.data(), buffer.size(), send, &loader, scratch.data()) != 0) {
        std::printf("MISMATCH signal=LOADED: the sample-load stream did not take %zu transfers\n", buffer.size() * {= a.upper() =}_LD_WORDS);
        return 1;
    }

    // 3. Requests before the start, then training.
    if (interrupt > 0) {
        permille = 500;
        run(20);
        permille = 0;
        while (!inflight.empty() || presenting || in_part || out_part) run(1);
    }
    const uint64_t start_cycle = cycle;
    training = true;
    {= a.core =}_start(&dev, iterations);
    permille = interrupt;
    if (interrupt == 0) {
        // A weight read while training starts or runs: refused at once
        // (SLVERR), without holding the bus until the run ends.
        int rresp = 0;
        const uint64_t asked = cycle;
        const uint32_t h = axi::read_resp(sim, kTensors[0].base, rresp, bus.tick);
        if (({= a.core =}_status(&dev) & {= a.upper() =}_STATUS_DONE) != 0) {
            std::printf("MISMATCH signal=s_axil_rvalid: a weight read issued during training was answered only when training was done (%llu cycles)\n",
                        static_cast<unsigned long long>(cycle - asked));
            return 1;
        }
        std::fprintf(log, "H %d %u\n", rresp, h);
    }
    // A poll of ITERATION, GROUP and ITERATION: tags the requests accepted
    // before it began (their answers are held, so the trainer still waits
    // where it served them, and both ITERATION reads agree).
    auto poll_state = [&](uint32_t& it, uint32_t& g) {
        const uint64_t gen = poll_gen++;
        const uint32_t it1 = {= a.core =}_read(&dev, {= a.upper() =}_REG_ITERATION);
        g = {= a.core =}_read(&dev, {= a.upper() =}_REG_GROUP);
        it = {= a.core =}_read(&dev, {= a.upper() =}_REG_ITERATION);
        for (Flight& f : inflight) {
            if (f.tagged || f.gen > gen) continue;
            if (it1 != it) {
                std::printf("MISMATCH signal=ITERATION: training moved on (iteration %u to %u) while the answer to request %zu, served during training, had not left\n",
                            it1, it, f.request);
                std::exit(1);
            }
            f.tagged = true;
            f.it = it;
            f.g = g;
            --untagged;
        }
    };
    bool paused = false, resuming = false, pause_asked = false, driver_paused = false;
    unsigned pauses = 0;
    // The safe point of the last pause (ITERATION, GROUP, MEMBER). A pause
    // is asked only once the run has left it: a pause takes effect at the
    // next safe point, and the requests served while paused must all have
    // left before the run goes on, so pausing again during that drain would
    // pause at the same safe point again, and a design whose answers take
    // long to drain (an image network's) would never train on.
    uint32_t last_it = ~0u, last_g = ~0u, last_m = ~0u;
    auto at_pause = [&](uint32_t it, uint32_t g) {
        last_it = it;
        last_g = g;
        last_m = {= a.core =}_read(&dev, {= a.upper() =}_REG_MEMBER);
    };
    auto moved = [&](uint32_t it, uint32_t g) {
        return it != last_it || g != last_g || {= a.core =}_read(&dev, {= a.upper() =}_REG_MEMBER) != last_m;
    };
    uint64_t resume_at = 0;
    const uint64_t limit = {= iteration_cycles =}ull * (iterations + 1) * 64 + 1000000;
    for (;;) {
        if (cycle - start_cycle > limit) {
            std::printf("TIMEOUT after %llu cycles (iteration %u)\n", static_cast<unsigned long long>(cycle - start_cycle), polled_it);
            return 2;
        }
        const uint32_t status = {= a.core =}_status(&dev);
        uint32_t it = 0, g = 0;
        poll_state(it, g);
        const bool now_paused = (status & {= a.upper() =}_STATUS_PAUSED) != 0;
        if (now_paused != paused) {
            paused = now_paused;
            pause_asked = false;
            std::fprintf(log, "%c %llu\n", paused ? 'P' : 'R', static_cast<unsigned long long>(cycle));
            if (paused) {
                resume_at = cycle + 1 + rng.next() % 200;
                // The committed parameters, through the weight windows (the
                // state polled above holds until the resume).
                if ((status & {= a.upper() =}_STATUS_WEIGHTS) == 0 || (status & {= a.upper() =}_STATUS_WEIGHTS_WRITE) != 0) {
                    std::printf("MISMATCH signal=STATUS: paused (0x%x) but weights are not readable, or are writable\n", status);
                    return 1;
                }
                std::fprintf(log, "K %u %u %u\n", pauses, it, g);
                at_pause(it, g);
                for (unsigned k = 0; k < kTensorCount; ++k) {
                    std::vector<int32_t> codes({= a.core =}_tensor_size(k));
                    // (the driver's read during training: paused already,
                    // it reads without resuming)
                    if ({= a.core =}_read_tensor_paused(&dev, k, codes.data(), 1) != 0 ||
                        ({= a.core =}_status(&dev) & {= a.upper() =}_STATUS_PAUSED) == 0) {
                        std::printf("MISMATCH signal=STATUS: the driver's read_tensor_paused failed or resumed a pause it did not make\n");
                        return 1;
                    }
                    if (!write_image(kTensors[k], codes, std::string("sim/run/") + kTensors[k].file + ".pause" + std::to_string(pauses))) return 3;
                    if (pauses == 0 && k == 0) {
                        // A write while paused is refused and changes nothing.
                        const uint32_t mask = kTensors[0].width >= 32 ? 0xffffffffu : (1u << kTensors[0].width) - 1;
                        const int resp = axi::write_resp(sim, kTensors[0].base, static_cast<uint32_t>(codes[0]) ^ 1u, bus.tick);
                        const uint32_t back = static_cast<uint32_t>({= a.core =}_read_param(&dev, 0, 0, 0));
                        if (resp != 2 || (back & mask) != (static_cast<uint32_t>(codes[0]) & mask)) {
                            std::printf("MISMATCH signal=s_axil_bresp: a weight write while paused got BRESP %d (expected 2, SLVERR) and the weight reads 0x%x after it (was 0x%x)\n",
                                        resp, back & mask, static_cast<uint32_t>(codes[0]) & mask);
                            return 1;
                        }
                    }
                }
                ++pauses;
            }
        }
        if (status & {= a.upper() =}_STATUS_DONE) break;
        if (interrupt > 0) {
            // Requests while training runs only if the trainer waits for an
            // answer we hold (one m_axis transfer: no scatter register
            // between), else only while paused; none while about to resume.
            resuming = paused && cycle >= resume_at;
            permille = resuming || (!paused && kOutPer > 1) ? 0 : interrupt;
            if (resuming && !presenting && untagged == 0) {= a.core =}_resume(&dev);
            else if (pauses == 1 && !paused && !pause_asked && !driver_paused && (status & {= a.upper() =}_STATUS_BUSY)) {
                // Once: the driver's read during a run, which pauses it,
                // reads and resumes. Just before the driver's resume (the
                // run paused at a safe point) the bus hook polls the state
                // the pause landed on and reads the other tensors, so that
                // this pause is compared like the harness's own (the hook
                // only reads).
                std::vector<std::vector<int32_t>> all(kTensorCount);
                for (unsigned k = 0; k < kTensorCount; ++k) all[k].resize({= a.core =}_tensor_size(k));
                bool seen = false;
                uint32_t pit = 0, pg = 0;
                uint64_t pcycle = 0;
                bus.before_write = [&](uint32_t offset, uint32_t value) {
                    if (offset != {= a.upper() =}_REG_CONTROL || value != {= a.upper() =}_CONTROL_RESUME || seen) return;
                    seen = true;
                    pcycle = cycle;
                    if (({= a.core =}_status(&dev) & {= a.upper() =}_STATUS_PAUSED) == 0) {
                        std::printf("MISMATCH signal=STATUS: the driver's read_tensor_paused resumes a run that is not paused\n");
                        std::exit(1);
                    }
                    poll_state(pit, pg);
                    at_pause(pit, pg);
                    for (unsigned k = 1; k < kTensorCount; ++k) {= a.core =}_read_tensor(&dev, k, all[k].data());
                };
                const int rc = {= a.core =}_read_tensor_paused(&dev, 0, all[0].data(), 1000000);
                bus.before_write = nullptr;
                if (rc != 0 || ({= a.core =}_status(&dev) & {= a.upper() =}_STATUS_PAUSED) != 0) {
                    std::printf("MISMATCH signal=STATUS: the driver's read_tensor_paused during the run timed out or left the run paused\n");
                    return 1;
                }
                driver_paused = true;
                std::fprintf(log, "Q %llu\n", static_cast<unsigned long long>(cycle));
                // (Not seen: the run ended before the pause landed, and
                // the driver read the trained tensor without pausing.)
                if (seen) {
                    std::fprintf(log, "P %llu\n", static_cast<unsigned long long>(pcycle));
                    std::fprintf(log, "K %u %u %u\n", pauses, pit, pg);
                    for (unsigned k = 0; k < kTensorCount; ++k) {
                        if (!write_image(kTensors[k], all[k], std::string("sim/run/") + kTensors[k].file + ".pause" + std::to_string(pauses))) return 3;
                    }
                    ++pauses;
                }
            }
            else if (!paused && !pause_asked && (status & {= a.upper() =}_STATUS_BUSY) && ((pauses == 0 && (it > 0 || g > 0)) || rng.permille(interrupt * 4)) &&
                     moved(it, g)) {
                {= a.core =}_pause(&dev);
                pause_asked = true;
            }
            else run(1 + static_cast<int>(rng.next() % 8));
        }
    }
    // Tag what the last poll did not, and let the answers out.
    permille = 0;
    while (presenting || in_part) run(1);
    uint32_t final_it = 0, final_g = 0;
    poll_state(final_it, final_g);
    while (!inflight.empty() || out_part) run(1);
    training = false;
    const uint64_t end_cycle = cycle;

    // 4. Requests after the end, answered with the trained weights.
    polled_it = final_it;
    polled_g = final_g;
    if (interrupt > 0) {
        permille = 500;
        run(20);
        permille = 0;
        while (!inflight.empty() || presenting || in_part || out_part) run(1);
    }
{%- for r in a.regs %}{% if r.offset >= 0x44 %}
    std::fprintf(log, "REG {= r.name =} %u\n", {= a.core =}_read(&dev, {= a.upper() =}_REG_{= r.name =}));
{%- endif %}{% endfor %}
    for (unsigned k = 0; k < kTensorCount; ++k) {
        std::vector<int32_t> codes({= a.core =}_tensor_size(k));
        {= a.core =}_read_tensor(&dev, k, codes.data());
        if (!write_image(kTensors[k], codes, std::string("sim/run/") + kTensors[k].file + ".final")) return 3;
    }
    std::fclose(log);
    sim.finish();
    std::printf("RESULT cycles=%llu requests=%zu\n", static_cast<unsigned long long>(end_cycle - start_cycle), next_req);
    return 0;
}
