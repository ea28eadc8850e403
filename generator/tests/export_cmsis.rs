//! The CMSIS-NN export (`fptgen_generator::export::cmsis_nn`) of the real
//! int8 TFLite fixtures' heads (tests/fixtures/int8_head, per channel and
//! per tensor): the generated header and source compile with `cc -std=c99
//! -Wall -Wextra -Werror -pedantic`, and a C program that computes the layer
//! from them as CMSIS-NN's per-channel kernel does (its
//! `arm_nn_vec_mat_mult_t_per_ch_s8` arithmetic with
//! `CMSIS_NN_USE_SINGLE_ROUNDING`'s `arm_nn_requantize`, written here in C
//! from CMSIS-NN's definition) gives the simulator's codes
//! (`fptgen_sim::int8::FullyConnected`, itself equal to LiteRT's reference
//! kernel, sim/tests/litert_int8.rs) on 2,000 random inputs. So the export's
//! array layout, offsets, multipliers, shifts and bounds are CMSIS-NN's
//! conventions. Fails (does not skip) without a C compiler.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::Command;

use fptgen_generator::export::cmsis_nn;
use fptgen_sim::int8::tflite::TfliteModel;
use fptgen_sim::int8::Rounding;

mod common;
use common::{run, scratch, Rng};

const INPUTS: usize = 2_000;

/// The layer computed from the exported arrays, as CMSIS-NN computes it.
const MAIN: &str = r#"
#include <stdio.h>
#include <stdint.h>
#include "head.h"

static int32_t requantize(int32_t val, int32_t multiplier, int32_t shift) {
    const int64_t total_shift = 31 - shift;
    const int64_t new_val = (int64_t)val * multiplier;
    int32_t result = (int32_t)(new_val >> (total_shift - 1));
    result = (result + 1) >> 1;
    return result;
}

int main(void) {
    int x[HEAD_INPUTS];
    for (;;) {
        for (int i = 0; i < HEAD_INPUTS; ++i) {
            if (scanf("%d", &x[i]) != 1) return 0;
        }
        for (int c = 0; c < HEAD_OUTPUTS; ++c) {
            int32_t acc = head_bias[c];
            for (int i = 0; i < HEAD_INPUTS; ++i) {
                acc += (head_weights[c * HEAD_INPUTS + i] + HEAD_FILTER_OFFSET) * (x[i] + HEAD_INPUT_OFFSET);
            }
            acc = requantize(acc, head_multiplier[c], head_shift[c]) + HEAD_OUTPUT_OFFSET;
            if (acc < HEAD_ACT_MIN) acc = HEAD_ACT_MIN;
            if (acc > HEAD_ACT_MAX) acc = HEAD_ACT_MAX;
            printf("%d ", (int)acc);
        }
        printf("\n");
    }
}
"#;

fn check(file: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/int8_head").join(file);
    let model = TfliteModel::open(&path).unwrap();
    let head = model.fully_connected().iter().find(|op| model.outputs().contains(&op.output)).unwrap().clone();
    let kernel = model.fully_connected_kernel(&head, Rounding::Single).unwrap();
    let p = kernel.params();
    let e = cmsis_nn("head", p, "test", file).unwrap();
    assert!(e.header.contains("with\n * CMSIS_NN_USE_SINGLE_ROUNDING"), "{}", e.header);
    let dir = scratch(&format!("export_cmsis_{}", file.replace('.', "_")));
    fs::write(dir.join("head.h"), &e.header).unwrap();
    fs::write(dir.join("head.c"), &e.source).unwrap();
    fs::write(dir.join("main.c"), MAIN).unwrap();
    run(
        Command::new("cc").args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O1", "-o", "layer", "main.c", "head.c"]),
        "cc",
        &dir,
    );
    let mut rng = Rng(0xc515);
    let xs: Vec<Vec<i8>> = (0..INPUTS).map(|_| (0..p.inputs).map(|_| rng.next() as i8).collect()).collect();
    let mut stdin = String::new();
    for x in &xs {
        for v in x {
            write!(stdin, "{v} ").unwrap();
        }
        stdin.push('\n');
    }
    fs::write(dir.join("inputs.txt"), stdin).unwrap();
    let out = run(Command::new("sh").args(["-c", "./layer < inputs.txt"]), "the exported layer", &dir);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), INPUTS);
    for (n, (line, x)) in lines.iter().zip(&xs).enumerate() {
        let got: Vec<i32> = line.split_whitespace().map(|v| v.parse().unwrap()).collect();
        let want: Vec<i32> = kernel.run(x).unwrap().iter().map(|&v| i32::from(v)).collect();
        assert_eq!(got, want, "{file}: input {n}: the exported layer in C against the simulator");
    }
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn per_channel_export_computes_the_simulators_codes_in_c() {
    check("model.tflite");
}

#[test]
fn per_tensor_export_computes_the_simulators_codes_in_c() {
    check("model_per_tensor.tflite");
}

#[test]
fn names_that_are_not_c_identifiers_are_refused() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/int8_head/model.tflite");
    let model = TfliteModel::open(&path).unwrap();
    let head = model.fully_connected().last().unwrap().clone();
    let kernel = model.fully_connected_kernel(&head, Rounding::Double).unwrap();
    for bad in ["1head", "he-ad", "", "h ead"] {
        assert!(cmsis_nn(bad, kernel.params(), "test", "x").is_err(), "{bad:?}");
    }
    let e = cmsis_nn("_head2", kernel.params(), "test", "x").unwrap();
    assert!(e.header.contains("double rounding") && e.header.contains("without\n * CMSIS_NN_USE_SINGLE_ROUNDING"), "{}", e.header);
}
