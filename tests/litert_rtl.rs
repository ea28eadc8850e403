//! The int8 head of `examples/int8_head` in hardware against LiteRT
//! (issue 15, "an independent check"): 10,000 seeded random int8 inputs of
//! the whole `.tflite` network (`prefix.tflite`: the frozen prefix and the
//! head) run in the LiteRT interpreter with its reference kernels
//! (`tests/fixtures/int8_head/run_litert.py`); the head's input codes there
//! are the generated design's input vectors in a Verilator co-simulation,
//! and both the simulator's and the RTL's outputs must equal the
//! interpreter's head outputs code for code (the co-simulation compares
//! every bit of every output with the simulator's and stops at the first
//! difference, naming the signal).
//!
//! Needs Verilator and Python 3 with `ai-edge-litert` (`tests/run.sh`
//! installs both); without them the test FAILS with the install command.

use std::path::Path;

use fptgen_flow::cosim;
use fptgen_generator::output::write_dir;
use fptgen_generator::plan::plan;
use fptgen_generator::render::{render, GenInfo};
use fptgen_sim::int8::tflite::TfliteModel;
use fptgen_sim::layers::dense_int8::TfliteSource;
use fptgen_sim::model::{self, LayerOp};
use fptgen_sim::network::Network;
use fptgen_sim::weights::{self, Conversion};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[path = "../sim/tests/common/litert.rs"]
mod litert;
use litert::{read_i8, run_litert, write_i8};

const INPUTS: usize = 10_000;

#[test]
fn int8_head_rtl_equals_litert_on_10000_inputs() {
    cosim::require_tool("verilator").unwrap_or_else(|e| panic!("{e}"));
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let m = model::load(&root.join("examples/int8_head/model.yaml")).expect("the example loads");
    let params = weights::load(&m, Conversion::Exact).expect("its weights load");
    let LayerOp::DenseInt8(d) = &m.layers[0].op else { panic!("the example's layer is dense_int8") };
    let src = d.tflite.clone().expect("the example reads its quantization from the .tflite");
    let tfl = TfliteModel::open(&src.file).expect("prefix.tflite");
    let head = TfliteSource::find(&tfl, &src.output).expect("the head operator").clone();
    // The example's weights are the .tflite's (init-weights --from-tflite).
    assert_eq!(params.layers[0], src.params().expect("the operator's parameters"), "examples/int8_head/weights.npz");
    let features = *tfl.tensor_at(tfl.inputs()[0]).expect("the input tensor").shape.last().expect("a shape") as usize;

    let mut rng = ChaCha8Rng::seed_from_u64(17);
    let data: Vec<i8> = (0..INPUTS * features).map(|_| rng.random()).collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let inputs_path = dir.path().join("inputs.npy");
    write_i8(&inputs_path, INPUTS, features, &data);
    run_litert(&src.file, &inputs_path, head.input, head.output, dir.path());
    let (_, head_in) = read_i8(&dir.path().join("head_in.npy"));
    let (_, head_out) = read_i8(&dir.path().join("head_out.npy"));
    let (n_in, n_out) = (m.input_len(), m.output_len());
    assert_eq!((head_in.len(), head_out.len()), (INPUTS * n_in, INPUTS * n_out), "the head's shapes");
    let inputs: Vec<Vec<i128>> = head_in.chunks(n_in).map(|r| r.iter().map(|&v| i128::from(v)).collect()).collect();

    // The simulator equals LiteRT ...
    let net = Network::new(m.clone(), params.clone()).expect("valid parameters");
    let sim = net.infer_batch(&inputs).expect("valid inputs");
    for (s, (got, want)) in sim.iter().zip(head_out.chunks(n_out)).enumerate() {
        if let Some(c) = (0..n_out).find(|&c| got[c] != i128::from(want[c])) {
            panic!("input {s}, output {c}: the simulator gives {}, LiteRT {}", got[c], want[c]);
        }
    }
    // ... and the RTL equals the simulator on every bit of the same inputs.
    let n = plan(&m);
    let gen = GenInfo { version: fptgen_generator::VERSION, source: "int8_head".into() };
    let files = render(&params, &n, &gen).expect("renders");
    let out = dir.path().join("out");
    write_dir(&out, fptgen_generator::output::DESIGN, &files).expect("writes");
    let r = cosim::run_inputs(&out, &n, &net, &inputs, 7, None).unwrap_or_else(|e| panic!("{e}"));
    assert!(r.passed(), "{}\n{:?}", r.summary(), r.first_mismatch);
    assert_eq!(r.vectors, INPUTS);
    println!("{}: every output of {INPUTS} LiteRT inputs equal in the RTL", r.summary());
}
