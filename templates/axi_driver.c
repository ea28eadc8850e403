{% import "macros.txt" as m -%}
/*
{% call m::header(" *", gen) %}{% endcall %}
 *
 * The C driver of {= a.module =} ({= a.core =}_driver.h).
 */

#include "{= a.core =}_driver.h"

static uint32_t mmio_read(struct {= a.core =}_dev *dev, uint32_t offset) {
    return dev->base[offset / 4u];
}

static void mmio_write(struct {= a.core =}_dev *dev, uint32_t offset, uint32_t value) {
    dev->base[offset / 4u] = value;
}

uint32_t {= a.core =}_read({= a.core =}_dev *dev, uint32_t offset) {
    return dev->read32(dev, offset);
}

void {= a.core =}_write({= a.core =}_dev *dev, uint32_t offset, uint32_t value) {
    dev->write32(dev, offset, value);
}

int {= a.core =}_check({= a.core =}_dev *dev) {
    if ({= a.core =}_read(dev, {= a.upper() =}_REG_ID) != {= a.upper() =}_ID_VALUE) return -1;
    if ({= a.core =}_read(dev, {= a.upper() =}_REG_VERSION) != {= a.upper() =}_VERSION_VALUE) return -1;
    if ({= a.core =}_read(dev, {= a.upper() =}_REG_INPUTS) != {= a.upper() =}_INPUTS) return -1;
    if ({= a.core =}_read(dev, {= a.upper() =}_REG_OUTPUTS) != {= a.upper() =}_OUTPUTS) return -1;
    return 0;
}

int {= a.core =}_init({= a.core =}_dev *dev, volatile void *base) {
    dev->base = (volatile uint32_t *)base;
    dev->read32 = mmio_read;
    dev->write32 = mmio_write;
    dev->ctx = 0;
    return {= a.core =}_check(dev);
}
{%- if let Some(t) = a.trainer %}

/* Sets `width` bits of buf at bit `pos` to the low bits of value. */
static void put_bits(uint8_t *buf, size_t pos, uint32_t value, unsigned width) {
    unsigned b;
    for (b = 0; b < width; ++b, ++pos) {
        const uint8_t mask = (uint8_t)(1u << (pos % 8u));
        if ((value >> b) & 1u) {
            buf[pos / 8u] = (uint8_t)(buf[pos / 8u] | mask);
        } else {
            buf[pos / 8u] = (uint8_t)(buf[pos / 8u] & (uint8_t)~mask);
        }
    }
}

/* Bit `pos` of an input vector of codes of `width` bits. */
static unsigned code_bit(const int32_t *codes, size_t pos, unsigned width) {
    return ((uint32_t)codes[pos / width] >> (pos % width)) & 1u;
}

size_t {= a.core =}_pack_samples(const int32_t *x, const int32_t *t, size_t samples, uint8_t *out) {
    const size_t x_bits = (size_t){= a.upper() =}_INPUTS * {= a.upper() =}_IN_WIDTH;
    size_t s, w, b, e, n = 0;
    for (s = 0; s < samples; ++s) {
        const int32_t *xs = x + s * {= a.upper() =}_INPUTS;
        for (w = 0; w < {= a.upper() =}_LD_WORDS; ++w, n += {= a.upper() =}_LD_BYTES) {
            uint8_t *tr = out + n;
            for (b = 0; b < {= a.upper() =}_LD_BYTES; ++b) tr[b] = 0;
            for (b = 0; b < {= a.upper() =}_LD_WORD_BITS; ++b) {
                const size_t pos = w * {= a.upper() =}_LD_WORD_BITS + b;
                if (pos < x_bits) put_bits(tr, b, code_bit(xs, pos, {= a.upper() =}_IN_WIDTH), 1u);
            }
            for (e = 0; e < {= a.upper() =}_OUTPUTS; ++e) {
                put_bits(tr, {= a.upper() =}_LD_TARGET_AT + e * {= a.upper() =}_OUT_WIDTH, (uint32_t)t[s * {= a.upper() =}_OUTPUTS + e], {= a.upper() =}_OUT_WIDTH);
            }
        }
    }
    return n;
}

int {= a.core =}_load_buffer({= a.core =}_dev *dev, const int32_t *x, const int32_t *t, size_t samples,
                       int (*send)(const uint8_t *data, size_t bytes, void *ctx), void *ctx, uint8_t *scratch) {
    const uint32_t before = {= a.core =}_read(dev, {= a.upper() =}_REG_LOADED);
    const size_t bytes = {= a.core =}_pack_samples(x, t, samples, scratch);
    if (send(scratch, bytes, ctx) != 0) return -1;
    return {= a.core =}_read(dev, {= a.upper() =}_REG_LOADED) - before == (uint32_t)(samples * {= a.upper() =}_LD_WORDS) ? 0 : -1;
}

uint32_t {= a.core =}_status({= a.core =}_dev *dev) {
    return {= a.core =}_read(dev, {= a.upper() =}_REG_STATUS);
}

void {= a.core =}_start({= a.core =}_dev *dev, uint32_t iterations) {
    {= a.core =}_write(dev, {= a.upper() =}_REG_ITERATIONS, iterations);
    {= a.core =}_write(dev, {= a.upper() =}_REG_CONTROL, {= a.upper() =}_CONTROL_START);
}

void {= a.core =}_pause({= a.core =}_dev *dev) {
    {= a.core =}_write(dev, {= a.upper() =}_REG_CONTROL, {= a.upper() =}_CONTROL_PAUSE);
}

void {= a.core =}_resume({= a.core =}_dev *dev) {
    {= a.core =}_write(dev, {= a.upper() =}_REG_CONTROL, {= a.upper() =}_CONTROL_RESUME);
}

int {= a.core =}_train({= a.core =}_dev *dev, uint32_t iterations, unsigned long max_polls) {
    unsigned long polls = 0;
    {= a.core =}_start(dev, iterations);
    while (({= a.core =}_status(dev) & {= a.upper() =}_STATUS_DONE) == 0u) {
        if (max_polls != 0ul && ++polls >= max_polls) return -1;
    }
    return 0;
}

/* The tensors' windows: base, columns, column bits, width, signed. */
static const struct {
    uint32_t base, depth, cols, col_bits, width, is_signed;
} tensors[{= a.upper() =}_TENSORS] = {
{%- for w in t.windows %}
    { {= a.upper() =}_{= w.upper() =}_BASE, {= a.upper() =}_{= w.upper() =}_DEPTH, {= a.upper() =}_{= w.upper() =}_COLS, {= a.upper() =}_{= w.upper() =}_COL_BITS, {= a.upper() =}_{= w.upper() =}_WIDTH, {= a.upper() =}_{= w.upper() =}_SIGNED },
{%- endfor %}
};

static uint32_t param_offset(unsigned tensor, uint32_t word, uint32_t col) {
    return tensors[tensor].base + (((word << tensors[tensor].col_bits) | col) * 4u);
}

int32_t {= a.core =}_read_param({= a.core =}_dev *dev, unsigned tensor, uint32_t word, uint32_t col) {
    return (int32_t){= a.core =}_read(dev, param_offset(tensor, word, col));
}

void {= a.core =}_write_param({= a.core =}_dev *dev, unsigned tensor, uint32_t word, uint32_t col, int32_t code) {
    {= a.core =}_write(dev, param_offset(tensor, word, col), (uint32_t)code);
}

size_t {= a.core =}_tensor_size(unsigned tensor) {
    return (size_t)tensors[tensor].depth * tensors[tensor].cols;
}

void {= a.core =}_read_tensor({= a.core =}_dev *dev, unsigned tensor, int32_t *codes) {
    uint32_t w, c;
    for (w = 0; w < tensors[tensor].depth; ++w) {
        for (c = 0; c < tensors[tensor].cols; ++c) *codes++ = {= a.core =}_read_param(dev, tensor, w, c);
    }
}

void {= a.core =}_write_tensor({= a.core =}_dev *dev, unsigned tensor, const int32_t *codes) {
    uint32_t w, c;
    for (w = 0; w < tensors[tensor].depth; ++w) {
        for (c = 0; c < tensors[tensor].cols; ++c) {= a.core =}_write_param(dev, tensor, w, c, *codes++);
    }
}

int {= a.core =}_read_tensor_paused({= a.core =}_dev *dev, unsigned tensor, int32_t *codes, unsigned long max_polls) {
    unsigned long polls = 0;
    int paused_here = 0;
    uint32_t s;
    while (((s = {= a.core =}_status(dev)) & {= a.upper() =}_STATUS_WEIGHTS) == 0u) {
        /* Running (or starting: a pause before the run has begun is
         * ignored, so ask again once it is busy). */
        if ((s & {= a.upper() =}_STATUS_BUSY) != 0u && !paused_here) {
            {= a.core =}_pause(dev);
            paused_here = 1;
        }
        if (max_polls != 0ul && ++polls >= max_polls) return -1;
    }
    {= a.core =}_read_tensor(dev, tensor, codes);
    if (paused_here && ({= a.core =}_status(dev) & {= a.upper() =}_STATUS_PAUSED) != 0u) {= a.core =}_resume(dev);
    return 0;
}
{%- endif %}
