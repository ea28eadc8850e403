{% import "macros.txt" as m -%}
/*
{% call m::header(" *", gen) %}{% endcall %}
 *
 * A small C driver of {= a.module =} (driver/registers.md). Register access
 * goes through two functions of the device (memory-mapped by default), so
 * that the same driver runs on a processor and in fptgen's co-simulation.
 */

#ifndef {= a.upper() =}_DRIVER_H
#define {= a.upper() =}_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "{= a.core =}_regs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A device: its AXI4-Lite base and the register accessors. */
typedef struct {= a.core =}_dev {
    volatile uint32_t *base;                                       /* memory-mapped registers */
    uint32_t (*read32)(struct {= a.core =}_dev *dev, uint32_t offset);  /* NULL: base[offset / 4] */
    void (*write32)(struct {= a.core =}_dev *dev, uint32_t offset, uint32_t value);
    void *ctx;                                                     /* for the accessors */
} {= a.core =}_dev;

/* Sets up dev for registers at base (memory-mapped accessors) and checks
 * ID, VERSION, INPUTS and OUTPUTS; returns 0, or -1 if the registers do
 * not describe this design. */
int {= a.core =}_init({= a.core =}_dev *dev, volatile void *base);

/* Checks the registers of a dev whose accessors are already set. */
int {= a.core =}_check({= a.core =}_dev *dev);

uint32_t {= a.core =}_read({= a.core =}_dev *dev, uint32_t offset);
void {= a.core =}_write({= a.core =}_dev *dev, uint32_t offset, uint32_t value);
{%- if a.trainer.is_some() %}

/* Packs samples for the sample-load stream: x holds samples *
 * {= a.upper() =}_INPUTS input codes, t samples * {= a.upper() =}_OUTPUTS target codes (raw codes
 * of the formats, one per int32_t); writes samples * {= a.upper() =}_LD_WORDS transfers of
 * {= a.upper() =}_LD_BYTES bytes (little-endian) to out, for a DMA to send to s_axis_ld.
 * Returns the bytes written. */
size_t {= a.core =}_pack_samples(const int32_t *x, const int32_t *t, size_t samples, uint8_t *out);

/* Loads the buffer: packs the samples and hands the transfers to send (a
 * DMA's transmit, which returns 0 on success), then checks through LOADED
 * that the design took them all. Returns 0 or -1. */
int {= a.core =}_load_buffer({= a.core =}_dev *dev, const int32_t *x, const int32_t *t, size_t samples,
                       int (*send)(const uint8_t *data, size_t bytes, void *ctx), void *ctx, uint8_t *scratch);

/* STATUS; start (training `iterations` iterations), pause, resume. */
uint32_t {= a.core =}_status({= a.core =}_dev *dev);
void {= a.core =}_start({= a.core =}_dev *dev, uint32_t iterations);
void {= a.core =}_pause({= a.core =}_dev *dev);
void {= a.core =}_resume({= a.core =}_dev *dev);

/* Starts training and polls STATUS until done (at most max_polls reads;
 * 0: no limit). Returns 0, or -1 on the limit. */
int {= a.core =}_train({= a.core =}_dev *dev, uint32_t iterations, unsigned long max_polls);

/* Parameter codes by tensor (training order), word and column. A read is
 * served before a start, when done, or while training is paused (STATUS
 * {= a.upper() =}_STATUS_WEIGHTS); a write before a start or when done
 * ({= a.upper() =}_STATUS_WEIGHTS_WRITE). Otherwise the wrapper refuses the access at
 * once (SLVERR: a bus error on most processors; a read returns 0, nothing is
 * written) rather than holding the bus until the run ends: check STATUS
 * first, or use {= a.core =}_read_tensor_paused during a run. */
int32_t {= a.core =}_read_param({= a.core =}_dev *dev, unsigned tensor, uint32_t word, uint32_t col);
void {= a.core =}_write_param({= a.core =}_dev *dev, unsigned tensor, uint32_t word, uint32_t col, int32_t code);

/* A whole tensor in its memory's layout (word-major, DEPTH * COLS codes). */
size_t {= a.core =}_tensor_size(unsigned tensor);
void {= a.core =}_read_tensor({= a.core =}_dev *dev, unsigned tensor, int32_t *codes);
void {= a.core =}_write_tensor({= a.core =}_dev *dev, unsigned tensor, const int32_t *codes);

/* Reads a tensor during training without waiting for its end: pauses the
 * run if it is running (the pause takes effect at the trainer's next safe
 * point), polls STATUS until weights are readable (at most max_polls reads;
 * 0: no limit), reads the tensor (the committed parameters) and resumes the
 * run if this call paused it. Before a start or when done it just reads.
 * Returns 0, or -1 on the limit (then the run may be left paused). */
int {= a.core =}_read_tensor_paused({= a.core =}_dev *dev, unsigned tensor, int32_t *codes, unsigned long max_polls);
{%- endif %}

#ifdef __cplusplus
}
#endif

#endif /* {= a.upper() =}_DRIVER_H */
