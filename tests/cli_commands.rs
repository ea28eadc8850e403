//! The `fptgen` commands on the examples: what a user runs.


mod common;
use common::{fptgen, root, untrained_copy};

use fptgen_sim::network::Network;
use fptgen_sim::tensor::{self, OutValues, Values};
use fptgen_sim::weights::{self, Conversion};


#[test]
fn check_accepts_all_three_examples() {
    let (code, out, err) = fptgen(
        &["check", "examples/tiny/model.yaml", "examples/jet_tagging/model.yaml", "examples/mnist/model.yaml"],
        &root(),
    );
    assert_eq!(code, 0, "{err}");
    for name in ["tiny: ok", "jet_tagging: ok", "mnist: ok"] {
        assert!(out.contains(name), "{out}");
    }
    // Seed 003's MNIST network has 178,110 parameters; 784*200 + 200 = 157,000
    // of them are in the first layer, all trainable (the paper's Table II).
    assert!(out.contains("total: 178110 parameters, 177800 MACs per inference, 157000 trainable parameters"), "{out}");
}

/// The MNIST CNN: its weights check; its parameter and MAC counts are the
/// architecture's (worked out here); the hardware commands refuse it,
/// naming the first layer they cannot build yet, and write nothing.
#[test]
fn the_mnist_cnn_checks_and_generates() {
    let (code, out, err) = fptgen(&["check", "examples/mnist_cnn/model.yaml"], &root());
    assert_eq!(code, 0, "{err}");
    // conv1 8*(9*1) + 8, conv2 16*(9*8) + 16, fc 10*784 + 10 parameters;
    // MACs 28*28*8*9 + 14*14*16*72 + 784*10; fc trainable.
    let params = 8 * 9 + 8 + 16 * 72 + 16 + 10 * 784 + 10;
    let macs = 28 * 28 * 8 * 9 + 14 * 14 * 16 * 72 + 784 * 10;
    assert!(out.contains(&format!("total: {params} parameters, {macs} MACs per inference, 7850 trainable parameters")), "{out}");
    assert!(out.contains("conv2  conv2d 3x3/1 same 14x14x8->14x14x16"), "{out}");
    let dir = tempfile::tempdir().expect("tempdir");
    let model = root().join("examples/mnist_cnn/model.yaml");
    let (code, out, err) = fptgen(&["generate", model.to_str().expect("utf8"), "-o", "out"], dir.path());
    assert_eq!(code, 0, "{err}");
    // One module per layer, the stream blocks and the trainer's serializer.
    for f in ["mnist_cnn_conv1.v", "mnist_cnn_pool1.v", "mnist_cnn_flat.v", "fptgen_swg.v", "fptgen_maxpool.v", "fptgen_flatten.v", "fptgen_serialize.v"] {
        assert!(dir.path().join("out/rtl").join(f).is_file(), "no rtl/{f}: {out}");
    }
    // At least 100,000 images per second at 200 MHz (issue 13).
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/report.json")).expect("report")).expect("json");
    let ii = report["network"]["ii"].as_u64().expect("ii");
    assert!(ii > 0 && 200e6 / ii as f64 >= 100_000.0, "II {ii}");
}

/// The residual example (a graph: add, concat, a side branch) checks,
/// showing each layer's inputs and the add's lowering; simulates exactly
/// as the library's network on its graph; and the hardware commands refuse
/// it as a graph, naming the layer.
#[test]
fn the_residual_example_checks_simulates_and_generates() {
    let (code, out, err) = fptgen(&["check", "examples/residual/model.yaml"], &root());
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("add 8x8x4 (lowered: concat + conv3x3 8->4)"), "{out}");
    assert!(out.contains("0 (+292 fixed)"), "{out}");
    assert!(out.contains("conv2, conv1") && out.contains("pool, side"), "the inputs column: {out}");
    // conv1 4*18+4, conv2 4*36+4, side 2*36+2, fc 3*96+3; the add's
    // 4*72+4 constants are not parameters.
    assert!(out.contains("total: 589 parameters"), "{out}");
    let dir = tempfile::tempdir().expect("tempdir");
    let model_path = root().join("examples/residual/model.yaml");
    let model = fptgen_sim::model::load(&model_path).expect("model");
    let net = Network::new(model.clone(), weights::load(&model, Conversion::Exact).expect("weights")).expect("net");
    let n = 5;
    let xs: Vec<f64> = (0..n * 128).map(|i| ((i as f64) * 0.37).sin().abs()).collect();
    tensor::write_npy(&dir.path().join("x.npy"), &[n, 8, 8, 2], &OutValues::F64(xs.clone())).expect("write x");
    let (code, _, err) = fptgen(
        &["simulate", model_path.to_str().expect("utf8"), "--inputs", "x.npy", "--output", "y.npy", "--output-kind", "raw"],
        dir.path(),
    );
    assert_eq!(code, 0, "{err}");
    let y = tensor::read_npy(&dir.path().join("y.npy")).expect("read y");
    assert_eq!(y.shape, vec![n, 3]);
    let Values::Int(got) = y.values else { panic!("raw output must be integers") };
    for s in 0..n {
        let raw: Vec<i128> = xs[s * 128..(s + 1) * 128].iter().map(|&x| model.input_format.quantize_f64(x).expect("finite")).collect();
        assert_eq!(net.infer(&raw).expect("infer"), got[s * 3..(s + 1) * 3].to_vec(), "sample {s}");
    }
    // The hardware: a fork for conv1's output (conv2 and the add) and for
    // pool's (side and the concat), joins for the add and the concat.
    let (code, _, err) = fptgen(&["generate", model_path.to_str().expect("utf8"), "-o", "out"], dir.path());
    assert_eq!(code, 0, "{err}");
    let top = std::fs::read_to_string(dir.path().join("out/rtl/residual_net.v")).expect("residual_net.v");
    assert_eq!(top.matches("fptgen_fork #(").count(), 2, "{top}");
    assert_eq!(top.matches("fptgen_concat #(").count(), 2, "{top}");
    // A graph of vectors: the input feeds two dense branches, concatenated:
    // a fork on the input, a join, and bit-exact with predicted cycles.
    let q = "{weight: 'ap_fixed<4,1>', bias: 'ap_fixed<6,2>', accum: 'ap_fixed<16,6>', output: 'ap_fixed<8,3>'}";
    let branches = format!(
        "name: two\ninput: {{shape: [4], format: 'ap_fixed<8,3>'}}\nweights: w.npz\nlayers:\n\
         \x20 - {{name: d1, type: dense, inputs: 4, outputs: 3, activation: relu, precision: {q}}}\n\
         \x20 - {{name: d2, type: dense, inputs: [input], outputs: 3, activation: relu, precision: {q}}}\n\
         \x20 - {{name: cat, type: concat, inputs: [d1, d2]}}\n\
         \x20 - {{name: out, type: dense, inputs: 6, outputs: 2, activation: linear, precision: {q}}}\n"
    );
    std::fs::write(dir.path().join("two.yaml"), branches).expect("write");
    let (code, _, err) = fptgen(&["init-weights", "two.yaml"], dir.path());
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = fptgen(&["cosim", "two.yaml", "--vectors", "30", "-o", "out2"], dir.path());
    assert_eq!(code, 0, "{out}\n{err}");
    let top = std::fs::read_to_string(dir.path().join("out2/rtl/two.v")).expect("two.v");
    assert_eq!((top.matches("fptgen_fork #(").count(), top.matches("fptgen_concat #(").count()), (1, 1), "{top}");
}

#[test]
fn simulate_matches_the_library_on_float_and_raw_inputs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model_path = root().join("examples/jet_tagging/model.yaml");
    let model = fptgen_sim::model::load(&model_path).expect("model");
    let params = weights::load(&model, Conversion::Exact).expect("weights");
    let net = Network::new(model.clone(), params).expect("net");
    let n = 9;
    // Float inputs spanning the input range, including values that need rounding
    // and values beyond the range of ap_fixed<16,6> (which wrap, AP_WRAP).
    let xs: Vec<f64> = (0..n * 16).map(|i| ((i as f64) * 0.7311).sin() * 40.0).collect();
    let xin = dir.path().join("x.npy");
    tensor::write_npy(&xin, &[n, 16], &OutValues::F64(xs.clone())).expect("write x");
    let yout = dir.path().join("y.npy");
    let (code, _, err) = fptgen(
        &["simulate", model_path.to_str().expect("utf8"), "--inputs", "x.npy", "--output", "y.npy", "--output-kind", "raw"],
        dir.path(),
    );
    assert_eq!(code, 0, "{err}");
    let y = tensor::read_npy(&yout).expect("read y");
    assert_eq!(y.shape, vec![n, 5]);
    let Values::Int(got) = y.values else { panic!("raw output must be integers") };
    for s in 0..n {
        let raw: Vec<i128> = xs[s * 16..(s + 1) * 16]
            .iter()
            .map(|&x| model.input_format.quantize_f64(x).expect("finite"))
            .collect();
        assert_eq!(net.infer(&raw).expect("infer"), got[s * 5..(s + 1) * 5].to_vec(), "sample {s}");
    }
    // Refuses to overwrite the output it wrote before.
    let (code, _, err) = fptgen(
        &["simulate", model_path.to_str().expect("utf8"), "--inputs", "x.npy", "--output", "y.npy"],
        dir.path(),
    );
    assert_eq!(code, 1);
    assert!(err.contains("y.npy") && err.contains("does not overwrite"), "{err}");
    // Raw integer inputs out of the input format's range are rejected with the sample and index.
    let xr = dir.path().join("xr.npy");
    let mut raw = vec![0i64; 2 * 16];
    raw[16 + 3] = 40000; // ap_fixed<16,6> codes are -32768..=32767
    tensor::write_npy(&xr, &[2, 16], &OutValues::I64(raw)).expect("write xr");
    let (code, _, err) = fptgen(
        &["simulate", model_path.to_str().expect("utf8"), "--inputs", "xr.npy", "--input-kind", "raw"],
        dir.path(),
    );
    assert_eq!(code, 1);
    assert!(err.contains("xr.npy") && err.contains("sample 1, value 3") && err.contains("40000"), "{err}");
    // Wrong shape is named.
    let (code, _, err) = fptgen(&["simulate", model_path.to_str().expect("utf8"), "--inputs", "y.npy", "--input-kind", "raw"], dir.path());
    assert_eq!(code, 1);
    assert!(err.contains("[9, 5]"), "{err}");
}

/// A long input (more than the 65,536 samples `simulate` runs per block
/// between progress updates) as little-endian float32, read in bulk: every
/// sample's outputs equal the library's, and a raw code out of range in
/// the last block is named by its sample in the whole batch.
#[test]
fn simulate_runs_a_long_float32_input_in_blocks() {
    use npyz::WriterBuilder;
    let dir = tempfile::tempdir().expect("tempdir");
    let model_path = root().join("examples/tiny/model.yaml");
    let model = fptgen_sim::model::load(&model_path).expect("model");
    let params = weights::load(&model, Conversion::Exact).expect("weights");
    let net = Network::new(model.clone(), params).expect("net");
    let n = 70_001;
    let xs: Vec<f32> = (0..n * 2).map(|i| (((i as f64) * 0.3719).sin() * 5.0) as f32).collect();
    {
        let f = std::fs::File::create(dir.path().join("x.npy")).expect("create");
        let mut w = npyz::WriteOptions::<f32>::new().default_dtype().shape(&[n as u64, 2]).writer(std::io::BufWriter::new(f)).begin_nd().expect("npy");
        w.extend(xs.iter().copied()).expect("write");
        w.finish().expect("finish");
    }
    let (code, _, err) = fptgen(&["simulate", model_path.to_str().expect("utf8"), "--inputs", "x.npy", "-o", "y.npy", "--output-kind", "raw"], dir.path());
    assert_eq!(code, 0, "{err}");
    let y = tensor::read_npy(&dir.path().join("y.npy")).expect("read y");
    let Values::Int(got) = y.values else { panic!("raw output must be integers") };
    let m = model.output_len();
    assert_eq!((y.shape, got.len()), (vec![n, m], n * m));
    for s in 0..n {
        let raw: Vec<i128> = xs[2 * s..2 * s + 2].iter().map(|&x| model.input_format.quantize_f64(f64::from(x)).expect("finite")).collect();
        assert_eq!(net.infer(&raw).expect("infer"), got[s * m..(s + 1) * m].to_vec(), "sample {s}");
    }
    let mut raw = vec![0i64; n * 2];
    raw[2 * 70_000 + 1] = 1 << 20;
    tensor::write_npy(&dir.path().join("xr.npy"), &[n, 2], &OutValues::I64(raw)).expect("write xr");
    let (code, _, err) = fptgen(&["simulate", model_path.to_str().expect("utf8"), "--inputs", "xr.npy", "--input-kind", "raw"], dir.path());
    assert_eq!(code, 1);
    assert!(err.contains("xr.npy") && err.contains("sample 70000, value 1") && err.contains("1048576"), "{err}");
}

#[test]
fn simulate_prints_float_outputs_for_one_sample() {
    let dir = tempfile::tempdir().expect("tempdir");
    tensor::write_npy(&dir.path().join("x.npy"), &[2], &OutValues::F64(vec![1.5, -0.75])).expect("write");
    let model = root().join("examples/tiny/model.yaml");
    let (code, out, err) = fptgen(&["simulate", model.to_str().expect("utf8"), "--inputs", "x.npy"], dir.path());
    assert_eq!(code, 0, "{err}");
    let m = fptgen_sim::model::load(&model).expect("model");
    let net = Network::new(m.clone(), weights::load(&m, Conversion::Exact).expect("w")).expect("net");
    let raw = [m.input_format.quantize_f64(1.5).expect("f"), m.input_format.quantize_f64(-0.75).expect("f")];
    let want: Vec<String> = net.infer(&raw).expect("infer").iter().map(|&r| m.output_format().to_f64(r).to_string()).collect();
    assert_eq!(out.trim(), want.join(" "));
}

#[test]
fn init_weights_is_seeded_and_never_overwrites() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = root().join("examples/mnist/model.yaml");
    let m = model.to_str().expect("utf8");
    for (name, seed) in [("a.npz", "5"), ("b.npz", "5"), ("c.npz", "6")] {
        let (code, _, err) = fptgen(&["init-weights", m, "--seed", seed, "-o", name], dir.path());
        assert_eq!(code, 0, "{err}");
    }
    let read = |n: &str| tensor::read_npz(&dir.path().join(n)).expect("npz");
    let (a, b, c) = (read("a.npz"), read("b.npz"), read("c.npz"));
    assert_eq!(a, b, "same seed, same bits");
    assert_ne!(a["fc1/w"], c["fc1/w"], "another seed, other weights");
    assert_eq!(a["meta/seed"].values, Values::Int(vec![5]));
    let before = std::fs::read(dir.path().join("a.npz")).expect("read");
    let (code, _, err) = fptgen(&["init-weights", m, "--seed", "7", "-o", "a.npz"], dir.path());
    assert_eq!(code, 1);
    assert!(err.contains("a.npz") && err.contains("does not overwrite"), "{err}");
    assert_eq!(std::fs::read(dir.path().join("a.npz")).expect("read"), before);
    // No temporary file is left behind.
    let names: Vec<String> = std::fs::read_dir(dir.path()).expect("dir").map(|e| e.expect("e").file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().all(|n| !n.contains("partial")), "{names:?}");
    // The written archive loads against the model (every value representable).
    let model = fptgen_sim::model::load(&model).expect("model");
    weights::load_from(&model, &dir.path().join("a.npz"), Conversion::Exact).expect("loads");
}

#[test]
fn every_subcommand_documents_every_option() {
    for (cmd, opts) in [
        ("check", vec!["--quantize", "MODEL"]),
        ("simulate", vec!["--inputs", "--output", "--input-kind", "--output-kind", "--quantize", "raw", "float"]),
        ("init-weights", vec!["--seed", "--output"]),
        ("cosim", vec!["--vectors", "--trace", "--train", "--iterations", "--interrupt-rate"]),
    ] {
        let (code, out, err) = fptgen(&[cmd, "--help"], &root());
        assert_eq!(code, 0, "{err}");
        for o in opts {
            assert!(out.contains(o), "`fptgen {cmd} --help` does not mention {o}:\n{out}");
        }
    }
    // A usage error is bad input like any other: status 1 (docs/errors.md, "Errors
    // and outputs").
    let (code, _, err) = fptgen(&["simulate"], &root());
    assert_eq!(code, 1, "usage errors exit 1: {err}");
}

#[test]
fn report_has_the_training_schedule() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = root().join("examples/tiny/model.yaml");
    let (code, _, err) = fptgen(&["generate", model.to_str().expect("utf8"), "-o", "out"], dir.path());
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/report.json")).expect("report")).expect("json");
    let t = &report["network"]["training"];
    // tiny: 2x2 weights + 2 biases trainable = 6 parameters; blocks 2 -> 3 groups;
    // population 4 -> 3 * 4 = 12 forward passes per iteration per image (seed 003's Table II measure).
    assert_eq!(t["trainable_params"], 6);
    assert_eq!(t["groups"], 3);
    assert_eq!(t["forward_passes_per_iteration_per_image"], 12);
    // Cycles per iteration, by docs/training.md's schedule: II 1, latency 5
    // (the adder tree: 1 fold + 3 + T = 1 for SIMD 2), M 4, one buffer word
    // per vector (D = 1), 2 outputs (W = 1 + ceil(clog2(2) / 2) = 2), so
    // E = 1 + (4 - 1) * 1 + 5 + 1 + 2 = 12; with P = 2 blocks (a ring,
    // passes of P cycles) a group of tg = 2 takes
    // N * (P + E + 5) + 2 * P + tg + 5 (nothing restores the perturbed
    // values between members; the odd members' accumulation rides on the
    // next perturbation pass, the last one's is a pass of P)
    // = 4 * 19 + 4 + 7 = 87 cycles; 3 groups.
    assert_eq!(report["network"]["latency"], 5);
    assert_eq!(t["cycles_per_iteration"], 261);
    assert_eq!(report["network"]["trainer"]["p"], 2);
    // A model without a training section has none.
    let model = untrained_copy(dir.path(), "mnist");
    let (code, _, err) = fptgen(&["generate", model.to_str().expect("utf8"), "-o", "mnist"], dir.path());
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("mnist/report.json")).expect("report")).expect("json");
    assert!(report["network"]["training"].is_null() && report["network"]["trainer"].is_null());
    assert!(!dir.path().join("mnist/rtl/mnist_net.v").exists(), "no trainer, no wrapper");
}

#[test]
fn cosim_train_refuses_bad_options() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tiny = root().join("examples/tiny/model.yaml");
    let untrained_model = untrained_copy(dir.path(), "tiny");
    let work = dir.path().join("work");
    std::fs::create_dir(&work).expect("mkdir");
    for (model, extra, words) in [
        (&tiny, vec!["--train", "--interrupt-rate", "1.5"], vec!["--interrupt-rate", "from 0 to 1"]),
        (&tiny, vec!["--train", "--iterations", "0"], vec!["--iterations", "from 1 to"]),
        (&untrained_model, vec!["--train"], vec!["tiny-untrained", "model.yaml", "training:"]),
    ] {
        let mut args = vec!["cosim", model.to_str().expect("utf8")];
        args.extend(extra);
        let (code, _, err) = fptgen(&args, &work);
        assert_eq!(code, 1, "{args:?}: {err}");
        for w in words {
            assert!(err.contains(w), "{args:?}: expected {w:?} in {err}");
        }
    }
    // --iterations without --train is a usage error.
    let (code, _, err) = fptgen(&["cosim", tiny.to_str().expect("utf8"), "--iterations", "2"], &work);
    assert_eq!(code, 1, "{err}");
    assert!(std::fs::read_dir(&work).expect("dir").next().is_none(), "nothing may be written");
}

/// The cursor's P committed values are LUTRAM up to 16 Kbit and block RAM
/// beyond (docs/training.md, "Hardware"): MNIST's fc1 parameters are 4-bit
/// codes, so P = 1000 is 4,000 bits (distributed) and P = 5000 is 20,000
/// (block). The generated top passes the style to `fptgen_param_cursor`.
#[test]
fn committed_values_are_lutram_until_16_kbit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = root().join("examples/mnist/model.yaml");
    for (blocks, style) in [("1000", "distributed"), ("4096", "distributed"), ("4097", "block"), ("5000", "block")] {
        let out = format!("p{blocks}");
        let (code, _, err) = fptgen(&["generate", model.to_str().expect("utf8"), "--blocks", blocks, "-o", &out], dir.path());
        assert_eq!(code, 0, "{err}");
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join(&out).join("report.json")).expect("report")).expect("json");
        assert_eq!(report["network"]["trainer"]["param_w"], 4, "MNIST's trainable codes are 4 bits");
        let top = std::fs::read_to_string(dir.path().join(&out).join("rtl/mnist.v")).expect("top");
        assert!(top.contains(&format!(".COMMITTED_STYLE(\"{style}\")")), "P = {blocks}: {style} expected");
    }
}

/// `simulate --weights W.npz` runs another archive's weights (here seeded
/// ones from `init-weights`): its outputs are the library's with those
/// weights, not the model's own; an archive that does not fit the model is
/// refused naming it.
#[test]
fn simulate_runs_the_weights_it_is_given() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let model_path = root().join("examples/tiny/model.yaml");
    let m = model_path.to_str().expect("utf8");
    let (code, _, err) = fptgen(&["init-weights", m, "--seed", "9", "-o", "w9.npz"], d);
    assert_eq!(code, 0, "{err}");
    let xs: Vec<i64> = vec![31, -64, 100, 7, -128, 127];
    tensor::write_npy(&d.join("x.npy"), &[3, 2], &OutValues::I64(xs.clone())).expect("write x");
    let run = |extra: &[&str], out: &str| {
        let mut args = vec!["simulate", m, "--inputs", "x.npy", "--input-kind", "raw", "--output-kind", "raw", "--output", out];
        args.extend(extra);
        let (code, _, err) = fptgen(&args, d);
        assert_eq!(code, 0, "{err}");
        let Values::Int(v) = tensor::read_npy(&d.join(out)).expect("read").values else { panic!("raw outputs") };
        v
    };
    let own = run(&[], "own.npy");
    let given = run(&["--weights", "w9.npz"], "given.npy");
    let model = fptgen_sim::model::load(&model_path).expect("model");
    let w9 = weights::load_from(&model, &d.join("w9.npz"), Conversion::Exact).expect("w9");
    let net = Network::new(model.clone(), w9).expect("net");
    for s in 0..3 {
        let x: Vec<i128> = xs[2 * s..2 * s + 2].iter().map(|&v| i128::from(v)).collect();
        assert_eq!(net.infer(&x).expect("infer"), given[2 * s..2 * s + 2].to_vec(), "sample {s}");
    }
    assert_ne!(own, given, "the seeded weights give other outputs than the model's own");
    // An archive that is not the model's: refused, naming it.
    let other = root().join("examples/jet_tagging/weights.npz");
    let (code, _, err) = fptgen(&["simulate", m, "--inputs", "x.npy", "--input-kind", "raw", "--weights", other.to_str().expect("utf8")], d);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("jet_tagging/weights.npz"), "{err}");
}
