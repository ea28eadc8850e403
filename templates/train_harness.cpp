{% import "macros.txt" as m -%}
/*
{% call m::header(" *", gen) %}{% endcall %}
 *
 * Verilator harness of {= n.name =}'s on-chip {% if h.feedback %}feedback-rule{% else %}ES{% endif %} training (fptgen cosim --train).
 *
 * usage: V{= n.name =} BUFFER.hex REQUESTS.hex SEED ITERATIONS INTERRUPT_PERMILLE LOG
 *   BUFFER.hex    {= h.m =} lines "X T": a sample's input vector and target vector, hex
 *   REQUESTS.hex  input vectors for inference requests, one per line
 *
 * Loads the buffer through the ld stream (with random gaps), starts
 * ITERATIONS iterations and runs until done. With INTERRUPT_PERMILLE > 0,
 * each cycle presents an inference request with that probability (per
 * mille), holds the output back at random, and now and then pauses training
 * for a while and resumes it; a few requests go before the start and after
 * the end. It writes LOG for fptgen to compare with the simulator:
 *   B cycle                      training started (st_busy rose)
 *   I iteration cycle            st_iteration became iteration
 *   L iteration group member loss              a member's loss (mon kind 0)
 *   Z iteration group loss                     the baseline loss (mon kind 1)
 *   U iteration group block param grad        an update (mon kind 2), hex
 *   (the feedback rules instead: group is the sample, and
 *   G iteration sample index delta             a delta (mon kind 0), hex
 *   W iteration sample index value             a parameter written (mon kind 1), hex)
 *   A request iteration group output           an answer, tagged with the
 *                                              iteration and group when the
 *                                              request was accepted, hex
 *   P cycle / R cycle            paused / resumed
 *   D cycle                      done
 * and finally raises dump_final for one cycle (a port the design has only
 * with FPTGEN_DUMP_FINAL defined, as sim/build.sh --train does), on which
 * every trainable memory writes its contents to sim/run/<image>.final. The
 * last line of stdout is RESULT cycles=C (C not counting that cycle).
 */

#include "harness_common.h"

#include <deque>
#include <tuple>
#include <utility>

using namespace harness;

namespace {

constexpr int kInBits = {= n.in_bits() =};
constexpr int kOutBits = {= n.out_bits() =};
constexpr int kValueBits = {= h.value_w =};  // mon_{% if h.feedback %}value{% else %}param{% endif %}
constexpr int kWords = {= h.words =};       // ld_x words per input vector
constexpr int kWordBits = {= h.word_w =};

}  // namespace

int main(int argc, char** argv) {
    TrainArgs args;
    if (!parse_train_args(argc, argv, {= h.m =}, kInBits, kOutBits, args)) return 3;
    const std::vector<std::pair<Words, Words>>& buffer = args.buffer;
    const std::vector<Words>& requests = args.requests;
    Rng rng(args.seed);
    const uint32_t iterations = args.iterations;
    const int interrupt = args.interrupt;
    FILE* log = args.log;

    Sim sim(argc, argv);
    Top* top = sim.top;
    const uint64_t& cycle = sim.cycle;
    top->in_valid = 0;
    top->out_ready = 0;
    top->ld_valid = 0;
    top->ctl_start = 0;
    top->ctl_pause = 0;
    top->ctl_resume = 0;
    top->cfg_iterations = iterations;
    top->dump_final = 0;
    sim.reset();

    // Requests in flight: (request index, iteration, group) in order.
    std::deque<std::tuple<size_t, uint32_t, uint32_t>> inflight;
    size_t next_req = 0;
    bool presenting = false;
    // One cycle of the external stream: maybe present a request, maybe take an answer.
    auto stream = [&](int permille, int ready_percent) {
        if (!presenting && permille > 0 && rng.permille(permille)) presenting = true;
        top->in_valid = presenting;
        if (presenting) set_sig(top->in_data, requests[next_req % requests.size()]);
        top->out_ready = static_cast<int>(rng.next() % 100) < ready_percent;
        top->eval();
        if (top->out_valid && top->out_ready) {
            if (inflight.empty()) {
                std::printf("ERROR an answer without a request at cycle %llu\n", static_cast<unsigned long long>(cycle));
                std::exit(1);
            }
            auto [r, it, g] = inflight.front();
            inflight.pop_front();
            std::fprintf(log, "A %zu %u %u %s\n", r, it, g, to_hex(get_sig(top->out_data, kOutBits), kOutBits).c_str());
        }
        if (top->in_valid && top->in_ready) {
            inflight.emplace_back(next_req % requests.size(), top->st_iteration, static_cast<uint32_t>(top->{% if h.feedback %}st_sample{% else %}st_group{% endif %}));
            ++next_req;
            presenting = false;
        }
    };

    // Load the buffer: kWords words per input vector, the target with the last.
    for (size_t k = 0; k < buffer.size(); ++k) {
        for (int w = 0; w < kWords;) {
            Words word((kWordBits + 31) / 32, 0);
            for (int b = 0; b < kWordBits; ++b) {
                const int p = w * kWordBits + b;
                if (p < kInBits && ((buffer[k].first[p / 32] >> (p % 32)) & 1)) word[b / 32] |= 1u << (b % 32);
            }
            top->ld_valid = rng.permille(700);
            set_sig(top->ld_x, word);
            set_sig(top->ld_t, buffer[k].second);
            top->eval();
            const bool fire = top->ld_valid && top->ld_ready;
            sim.edge();
            if (fire) ++w;
        }
    }
    top->ld_valid = 0;

    // A few requests before the start.
    if (interrupt > 0) {
        for (int i = 0; i < 20; ++i) {
            stream(500, 70);
            sim.edge();
        }
    }

    top->ctl_start = 1;
    bool busy = false, done = false, paused = false;
    uint32_t iteration = 0;
    uint64_t pause_until = 0;
    const uint64_t limit = {= h.iteration_cycles =}ull * (iterations + 1) * 16 + 100000;
    uint64_t start_cycle = cycle;
    while (!done || !inflight.empty() || presenting) {
        if (cycle - start_cycle > limit) {
            std::printf("TIMEOUT after %llu cycles (iteration %u)\n", static_cast<unsigned long long>(cycle - start_cycle), iteration);
            return 2;
        }
        if (interrupt > 0) {
            stream(done ? 0 : interrupt, 70);
            if (!paused && busy && rng.permille(interrupt / 10)) top->ctl_pause = 1;
            if (paused && cycle >= pause_until) top->ctl_resume = 1;
        } else {
            top->in_valid = 0;
            top->out_ready = 1;
            top->eval();
        }
        if (top->mon_valid) {
            const uint32_t it = top->st_iteration;
            const uint32_t g = static_cast<uint32_t>(top->{% if h.feedback %}st_sample{% else %}st_group{% endif %});
{%- if h.feedback %}
            std::fprintf(log, "%c %u %u %u %s\n", top->mon_kind ? 'W' : 'G', it, g, static_cast<uint32_t>(top->mon_index),
                         to_hex(get_sig(top->mon_value, kValueBits), kValueBits).c_str());
{%- else %}
            switch (top->mon_kind) {
                case 0:
                    std::fprintf(log, "L %u %u %u %u\n", it, g, static_cast<uint32_t>(top->mon_index), top->st_last_loss);
                    break;
                case 1:
                    std::fprintf(log, "Z %u %u %u\n", it, g, top->st_last_loss);
                    break;
                default:
                    std::fprintf(log, "U %u %u %u %s %08x\n", it, g, static_cast<uint32_t>(top->mon_index),
                                 to_hex(get_sig(top->mon_param, kValueBits), kValueBits).c_str(), top->mon_grad);
            }
{%- endif %}
        }
        sim.edge();
        top->ctl_start = 0;
        top->ctl_pause = 0;
        top->ctl_resume = 0;
        if (!busy && top->st_busy) {
            busy = true;
            std::fprintf(log, "B %llu\n", static_cast<unsigned long long>(cycle));
        }
        if (top->st_iteration != iteration) {
            iteration = top->st_iteration;
            std::fprintf(log, "I %u %llu\n", iteration, static_cast<unsigned long long>(cycle));
        }
        if (top->st_paused != paused) {
            paused = top->st_paused;
            if (paused) pause_until = cycle + 1 + rng.next() % 200;
            std::fprintf(log, "%c %llu\n", paused ? 'P' : 'R', static_cast<unsigned long long>(cycle));
        }
        if (!done && top->st_done) {
            done = true;
            std::fprintf(log, "D %llu\n", static_cast<unsigned long long>(cycle));
        }
    }
    // A few requests after the end, answered with the trained parameters.
    if (interrupt > 0) {
        for (int i = 0; i < 200 && (i < 20 || !inflight.empty() || presenting); ++i) {
            stream(i < 20 ? 500 : 0, 70);
            sim.edge();
        }
    }
    std::fclose(log);
    const uint64_t end_cycle = cycle;
    // The final trainable memories, to sim/run/<image>.final.
    top->dump_final = 1;
    sim.edge();
    top->dump_final = 0;
    sim.finish();
    std::printf("RESULT cycles=%llu requests=%zu\n", static_cast<unsigned long long>(end_cycle - start_cycle), next_req);
    return 0;
}
