{% import "macros.txt" as m -%}
/*
{% call m::header(" *", gen) %}{% endcall %}
 *
 * An AXI4-Lite master for the harnesses of {= a.module =} (built with
 * FPTGEN_AXI): single reads and writes through the slave's handshakes, each
 * cycle first calling a "tick" that drives the streams, so that register
 * traffic and stream traffic overlap as on a real bus; and the C driver's
 * register accessors on top of them (driver/{= a.core =}_driver.c runs
 * unchanged against the simulated bus).
 */

#pragma once

#include "harness_common.h"
#include "../driver/{= a.core =}_driver.h"

#include <functional>

namespace axi {

using harness::Sim;
using Tick = std::function<void()>;  // sets stream inputs and evaluates

// Cycles a transaction may wait (every one is answered within a few).
constexpr uint64_t kTimeout = 200000000ull;

[[noreturn]] inline void fail(const char* what, uint32_t addr, uint64_t cycle) {
    std::printf("ERROR AXI4-Lite %s at 0x%x: no response by cycle %llu\n", what, addr, static_cast<unsigned long long>(cycle));
    std::printf("RESULT cycles=0 failed=axi\n");
    std::exit(2);
}

inline void idle(Sim& sim) {
    auto* t = sim.top;
    t->s_axil_awvalid = 0;
    t->s_axil_wvalid = 0;
    t->s_axil_bready = 0;
    t->s_axil_arvalid = 0;
    t->s_axil_rready = 0;
    t->s_axil_awprot = 0;
    t->s_axil_arprot = 0;
    t->s_axil_wstrb = 0xf;
}

inline void step(Sim& sim, const Tick& tick) {
    if (tick) tick();
    else sim.top->eval();
}

// A write: address and data valid together until taken, then the
// response, which it returns (BRESP: 0 OKAY, 2 SLVERR).
inline int write_resp(Sim& sim, uint32_t addr, uint32_t data, const Tick& tick = nullptr) {
    auto* t = sim.top;
    t->s_axil_awaddr = addr;
    t->s_axil_wdata = data;
    t->s_axil_awvalid = 1;
    t->s_axil_wvalid = 1;
    t->s_axil_bready = 1;
    const uint64_t until = sim.cycle + kTimeout;
    int bresp = 0;
    for (;;) {
        step(sim, tick);
        const bool take = t->s_axil_awvalid && t->s_axil_awready && t->s_axil_wready;
        const bool resp = t->s_axil_bvalid && t->s_axil_bready;
        if (resp) bresp = static_cast<int>(t->s_axil_bresp);
        sim.edge();
        if (take) {
            t->s_axil_awvalid = 0;
            t->s_axil_wvalid = 0;
        }
        if (resp) break;
        if (sim.cycle > until) fail("write", addr, sim.cycle);
    }
    t->s_axil_bready = 0;
    return bresp;
}

// A write that must be answered OKAY.
inline void write(Sim& sim, uint32_t addr, uint32_t data, const Tick& tick = nullptr) {
    const int bresp = write_resp(sim, addr, data, tick);
    if (bresp != 0) {
        std::printf("ERROR AXI4-Lite write at 0x%x: BRESP %d\n", addr, bresp);
        std::exit(2);
    }
}

// A read: the address valid until taken, then the data and RRESP (0 OKAY,
// 2 SLVERR).
inline uint32_t read_resp(Sim& sim, uint32_t addr, int& rresp, const Tick& tick = nullptr) {
    auto* t = sim.top;
    t->s_axil_araddr = addr;
    t->s_axil_arvalid = 1;
    t->s_axil_rready = 1;
    const uint64_t until = sim.cycle + kTimeout;
    uint32_t data = 0;
    for (;;) {
        step(sim, tick);
        const bool take = t->s_axil_arvalid && t->s_axil_arready;
        const bool resp = t->s_axil_rvalid && t->s_axil_rready;
        if (resp) {
            rresp = static_cast<int>(t->s_axil_rresp);
            data = t->s_axil_rdata;
        }
        sim.edge();
        if (take) t->s_axil_arvalid = 0;
        if (resp) break;
        if (sim.cycle > until) fail("read", addr, sim.cycle);
    }
    t->s_axil_rready = 0;
    return data;
}
// A read that must be answered OKAY.
inline uint32_t read(Sim& sim, uint32_t addr, const Tick& tick = nullptr) {
    int rresp = 0;
    const uint32_t data = read_resp(sim, addr, rresp, tick);
    if (rresp != 0) {
        std::printf("ERROR AXI4-Lite read at 0x%x: RRESP %d\n", addr, rresp);
        std::exit(2);
    }
    return data;
}
// The C driver on the simulated bus: dev.ctx points to a Bus.
// before_write, when set, is called before each write the driver makes
// (offset, value), e.g. to see the state a pause the driver made landed on
// before the driver's resume.
struct Bus {
    Sim* sim;
    Tick tick;
    std::function<void(uint32_t, uint32_t)> before_write = nullptr;
};

inline uint32_t bus_read(struct {= a.core =}_dev* dev, uint32_t offset) {
    Bus* b = static_cast<Bus*>(dev->ctx);
    return read(*b->sim, offset, b->tick);
}

inline void bus_write(struct {= a.core =}_dev* dev, uint32_t offset, uint32_t value) {
    Bus* b = static_cast<Bus*>(dev->ctx);
    if (b->before_write) b->before_write(offset, value);
    write(*b->sim, offset, value, b->tick);
}

inline {= a.core =}_dev device(Bus& bus) {
    {= a.core =}_dev dev;
    dev.base = nullptr;
    dev.read32 = bus_read;
    dev.write32 = bus_write;
    dev.ctx = &bus;
    return dev;
}

// Prints the registers that describe the design ("REG NAME VALUE", for
// fptgen to compare with the model) and the driver's check of them.
inline void print_info(Sim& sim) {
    idle(sim);
    const struct {
        const char* name;
        uint32_t offset;
    } regs[] = {
{%- for r in a.regs %}{% if r.offset < 0x40 %}
        {"{= r.name =}", {= a.upper() =}_REG_{= r.name =}},
{%- endif %}{% endfor %}
    };
    for (const auto& r : regs) std::printf("REG %s %u\n", r.name, read(sim, r.offset));
    Bus bus{&sim, nullptr};
    {= a.core =}_dev dev = device(bus);
    std::printf("DRIVER check=%d\n", {= a.core =}_check(&dev));
}

}  // namespace axi
