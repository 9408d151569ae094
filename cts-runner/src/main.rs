//! cts-runner: `platforms` lists what the ICD loader offers; `build FILE` builds an
//! OpenCL C file on the first platform and prints the status, build log and time;
//! `bench [--platform NAME ...] [--only async|builds|vector|shapes|workers|commands|features] [--json FILE] [--svg FILE]` compares platforms
//! side by side;
//! `khronos (--suite PATH | --test-basic PATH)... [--filter GLOB]... [--platform NAME]
//! [--jobs N] [--timeout SECS] [--junit FILE] [--json FILE]` runs Khronos CTS suites
//! (of test_basic, by default the async-copy tests) with counts per suite;
//! `suite [--platform NAME] [--filter GLOB]... [--junit FILE] [--json FILE]
//! [--selftest-failure]` runs our own conformance suites.
//! `--ferrocl-build` makes the loader use this build tree's FerroCL (alone for
//! `build`, next to the system's other platforms for `bench`).

use std::ptr::null_mut;

use cts_runner::cl::*;
use cts_runner::{cl, icd_env};

fn platform_name(p: cl_platform_id) -> String {
    let mut buf = vec![0u8; 256];
    let mut len = 0usize;
    cl!(clGetPlatformInfo(p, CL_PLATFORM_NAME, buf.len(), buf.as_mut_ptr().cast(), &mut len));
    buf.truncate(len.saturating_sub(1));
    String::from_utf8_lossy(&buf).into_owned()
}

/// What `--help` prints, per command; the first entry is the overview.
const USAGE: &[(&str, &str)] = &[
    (
        "",
        "usage: cts-runner [--ferrocl-build] [COMMAND] [OPTIONS]

Answers \"does this OpenCL platform work, and how fast?\" through the system ICD loader.

commands:
  platforms   list the platforms the loader offers (the default)
  suite       run FerroCL's own conformance suites (kernels basics, async copies)
  khronos     run tests of Khronos CTS suites you built
  bench       benchmark platforms side by side with host references
  build       build an OpenCL C file and print the status, log and time
  coverage    which OpenCL C builtins clang declares for the device and which it defines
  stress      many threads sharing one context, every result verified

--ferrocl-build (before or after the command) uses this build tree's FerroCL: alone,
or next to the system's other platforms for bench.
'cts-runner COMMAND --help' describes a command.",
    ),
    ("platforms", "usage: cts-runner platforms [--ferrocl-build]\n\nLists the names of the platforms the ICD loader offers."),
    (
        "suite",
        "usage: cts-runner suite [--ferrocl-build] [--platform NAME] [--filter GLOB]... [--junit FILE] [--json FILE]

Runs FerroCL's conformance suites (kernels basics, async copies) on one platform
(default: the first) and prints a table per group. --filter selects cases by name
(e.g. 'async/2D/*'); --junit and --json write reports. Exit status 1 on any failure.",
    ),
    (
        "khronos",
        "usage: cts-runner khronos (--suite PATH | --test-basic PATH | --whole PATH)... [--ferrocl-build]
                          [--filter GLOB]... [--cts-arg ARG]... [--platform NAME] [--jobs N]
                          [--timeout SECS] [--logs DIR] [--junit FILE] [--json FILE]

Runs the tests of Khronos CTS suite binaries you built (test_half, test_workgroups, ...:
--suite, every test; --test-basic, its 15 async-copy and prefetch tests), one process
per test with a timeout, and prints counts per suite. --whole runs a suite as one
process without test names (test_conversions, whose tests its --list does not name),
reported as its test 'all'. --filter selects tests by name or
'suite/test'; --cts-arg passes an option to every test (e.g. -w, the quick mode);
--logs keeps each test's output as DIR/suite/test.log. A test that says its feature is
unsupported, or skips every configuration, counts as skipped.",
    ),
    (
        "bench",
        "usage: cts-runner bench [--ferrocl-build] [--platform NAME]... [--only async|builds|vector|shapes|workers|commands|features] [--json FILE] [--svg FILE]
                        [--save-binaries DIR | --binaries DIR] [--workers N] [--copy NAME]...

Runs the kernel and async-copy benchmarks on each platform (default: FerroCL, PoCL and
Intel's CPU runtime, those the loader offers) with host saxpy, memcpy and SGEMM as
references measured in the same run, and prints a table (and
JSON, an SVG chart). --save-binaries writes every program's binary to DIR (keyed by
platform, options and source); --binaries loads them instead of building, for a host
without a compiler (the build figures are then left out); a platform with no saved
binaries (another vendor there) builds its programs itself. --only runs one section:
the async copies, or the builds of programs shaped like applications' (1, 16 and 56
kernels through images, and a kernel of ~10 MB of IR; cold build plus first launches),
the vector arithmetic chains (float16, int16 and half16), the kernel shapes (loops,
divergence, barriers and tiles as real kernels write them, each checked against the host),
or FerroCL's copy workers against none (FERROCL_COPY_WORKERS=model and 0; `workers`;
there --workers N forces N workers instead of the model, and --copy NAME sweeps only the
copies whose names contain NAME), or 100 small launches replayed from a command buffer
against the same enqueued one by one (`commands`), or float atomics under contention and
a launch split over two sub-devices (`features`). --async-only is --only async.",
    ),
    (
        "stress",
        "usage: cts-runner stress [--ferrocl-build] [--platform NAME] [--threads N]... [--seconds S] [--faults]

Runs N application threads (default 8; --threads may repeat, one run each) for S
seconds (default 10) on one context: each loops over a verified chain of write,
kernel, copy, fill and read (sometimes a map and a user-event gate), on a queue all
threads share or on its own in-order or out-of-order queue, with a callback on every
launch. --faults adds a thread launching a faulting kernel every 100 ms, each launch
of which must fail. Prints commands per second, wrong results, errors, callbacks and
resident memory; exit status 1 on anything wrong.",
    ),
    (
        "build",
        "usage: cts-runner build [--ferrocl-build] [--platform NAME] [--options OPTS] [--separate] [--then-cache DIR]
                        [--cold N] FILE

Builds FILE (OpenCL C, or a SPIR-V module) for the device of FerroCL (or of --platform NAME; else of the
first platform) and prints the status, the
build log and the time the build took; --separate compiles and links it
(clCompileProgram, clLinkProgram) instead of clBuildProgram. --then-cache DIR moves
FerroCL's program cache to DIR (FERROCL_CACHE_DIR) after the first build. --cold N then builds N variants of FILE no
process has built before (a comment appended), one after the other in this process as
a conformance test does, and prints each time and the median.",
    ),
    (
        "coverage",
        "usage: cts-runner coverage [--ferrocl-build] [--platform NAME] [--std CL1.2,CL2.0,CL3.0] [--json FILE]

Lists every builtin overload clang's OpenCL header declares for the device's extensions
and OpenCL C features (per -cl-std), builds kernels calling them in batches on the
platform, and prints per family how many it defines (half overloads counted apart).
Exit status 1 when a batch failed to build for a reason other than missing builtins.",
    ),
    (
        "bench-one",
        "usage: cts-runner bench-one --platform NAME --warm FILE\n\nOne platform's measurements: bench runs it in a child process per platform.",
    ),
];

fn usage(command: &str) -> Option<&'static str> {
    USAGE.iter().find(|(c, _)| *c == command).map(|(_, u)| *u)
}

fn main() {
    let all: Vec<String> = std::env::args().skip(1).collect();
    // `--ferrocl-build` is global: accepted before or after the command.
    let ferrocl_build = all.iter().any(|a| a == "--ferrocl-build");
    let mut args: Vec<String> = all.into_iter().filter(|a| a != "--ferrocl-build").collect();
    let command = match args.first().map(String::as_str) {
        None | Some("platforms") => "platforms".to_string(),
        Some("-h" | "--help" | "help") => {
            println!("{}", usage(args.get(1).map_or("", String::as_str)).unwrap_or(USAGE[0].1));
            return;
        }
        Some(c) if usage(c).is_some() && !c.is_empty() => c.to_string(),
        Some(c) => {
            eprintln!("cts-runner: unknown command '{c}'\n\n{}", USAGE[0].1);
            std::process::exit(2);
        }
    };
    let command = command.as_str();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{}", usage(command).unwrap_or(USAGE[0].1));
        return;
    }
    if !args.is_empty() {
        args.remove(0);
    }
    if ferrocl_build {
        match icd_env::build_tree_driver() {
            Some(d) => {
                let set = if command == "bench" { icd_env::use_with_system(&d) } else { icd_env::use_only(&d) };
                if let Err(e) = set {
                    eprintln!("cts-runner: {e}");
                    std::process::exit(2);
                }
            }
            None => {
                eprintln!("cts-runner: no FerroCL driver in the build tree: run 'cargo build --release' first");
                std::process::exit(2);
            }
        }
    }
    if let Err(e) = cl::api() {
        eprintln!("cts-runner: {e}");
        std::process::exit(2);
    }
    let mut n = 0;
    let code = cl!(clGetPlatformIDs(0, null_mut(), &mut n));
    match command {
        "build" => std::process::exit(build_file(&args)),
        "stress" => std::process::exit(stress(&args)),
        "bench" => std::process::exit(bench(&args)),
        "bench-one" => std::process::exit(bench_one(&args)),
        "coverage" => std::process::exit(coverage(&args)),
        "suite" => std::process::exit(suite(&args)),
        "khronos" => std::process::exit(khronos(&args, code == CL_SUCCESS && n > 0)),
        _ => {}
    }
    if code != CL_SUCCESS || n == 0 {
        eprintln!("cts-runner: no OpenCL platform found (install one, e.g. FerroCL's .deb or pocl-opencl-icd)");
        std::process::exit(1);
    }
    let mut ps = vec![null_mut(); n as usize];
    cl!(clGetPlatformIDs(n, ps.as_mut_ptr(), null_mut()));
    for p in ps {
        println!("{}", platform_name(p));
    }
}

/// `build [--options OPTS] FILE`: builds the file for the first platform's device.
fn build_file(args: &[String]) -> i32 {
    let mut options = String::new();
    let mut file = None;
    let mut cold = 0usize;
    let mut separate = false;
    let mut then_cache = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--options" => options = it.next().cloned().unwrap_or_default(),
            "--cold" => cold = it.next().and_then(|n| n.parse().ok()).unwrap_or(0),
            "--separate" => separate = true,
            "--then-cache" => then_cache = it.next().cloned(),
            "--platform" => {
                it.next();
            }
            "--ferrocl-build" => {}
            f => file = Some(f.to_string()),
        }
    }
    let Some(file) = file else {
        eprintln!("usage: cts-runner build [--options OPTS] [--cold N] FILE");
        return 2;
    };
    let bytes = match std::fs::read(&file) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("cts-runner: {file}: {e}");
            return 2;
        }
    };
    // A SPIR-V module (its magic number first) is built with clCreateProgramWithIL.
    let il = bytes.starts_with(&0x0723_0203u32.to_le_bytes());
    if il && cold > 0 {
        eprintln!("cts-runner: --cold needs OpenCL C (variants differ by a comment)");
        return 2;
    }
    let source = String::from_utf8_lossy(&bytes).into_owned();
    // FerroCL where the loader offers it (other platforms may come first), else what
    // --platform names, else the first.
    let wanted = flag_values(args, "--platform").pop().unwrap_or_else(|| "FerroCL".into());
    let platform = match cts_runner::session::platform_named(&wanted) {
        Ok((p, _)) => p,
        Err(_) => {
            let mut first = null_mut();
            cl!(clGetPlatformIDs(1, &mut first, null_mut()));
            first
        }
    };
    let mut device = null_mut();
    let mut e = 0;
    cl!(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &mut device, null_mut()));
    let context = cl!(clCreateContext(std::ptr::null(), 1, &device, None, null_mut(), &mut e));
    let opts = std::ffi::CString::new(options).unwrap_or_default();
    // Builds `text`: the status, the time, the log.
    let mut build = |text: &str| {
        let src = std::ffi::CString::new(text).unwrap_or_default();
        let ptr = src.as_ptr();
        let program = if il {
            cl!(clCreateProgramWithIL(context, bytes.as_ptr().cast(), bytes.len(), &mut e))
        } else {
            cl!(clCreateProgramWithSource(context, 1, &ptr as *const _ as *mut _, std::ptr::null(), &mut e))
        };
        if program.is_null() {
            return (e, 0.0, String::new());
        }
        let start = std::time::Instant::now();
        let (program, code) = if separate {
            let code = cl!(clCompileProgram(
                program,
                1,
                &device,
                opts.as_ptr(),
                0,
                std::ptr::null(),
                null_mut(),
                None,
                null_mut()
            ));
            if code != CL_SUCCESS {
                (program, code)
            } else {
                let linked =
                    cl!(clLinkProgram(context, 1, &device, std::ptr::null(), 1, &program, None, null_mut(), &mut e));
                cl!(clReleaseProgram(program));
                (linked, e)
            }
        } else {
            (program, cl!(clBuildProgram(program, 1, &device, opts.as_ptr(), None, null_mut())))
        };
        let took = start.elapsed().as_secs_f64() * 1e3;
        let mut log = vec![0u8; 1 << 16];
        let mut len = 0;
        cl!(clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, log.len(), log.as_mut_ptr().cast(), &mut len));
        log.truncate(len.saturating_sub(1));
        cl!(clReleaseProgram(program));
        (code, took, String::from_utf8_lossy(&log).into_owned())
    };
    let (code, took, log) = build(&source);
    let name = if code == CL_SUCCESS { "CL_SUCCESS".to_string() } else { code.to_string() };
    println!("build: {name} in {took:.2} ms");
    print!("{log}");
    if code != CL_SUCCESS {
        return 1;
    }
    if let Some(dir) = then_cache {
        // SAFETY (of the environment write): the driver reads it only when it builds,
        // on this thread; its other threads are idle between builds.
        std::env::set_var("FERROCL_CACHE_DIR", dir);
    }
    let stamp = format!("{:?} {}", std::time::SystemTime::now(), std::process::id());
    let mut times = Vec::new();
    for i in 0..cold {
        let (code, took, log) = build(&format!("{source}\n// cold variant {i} {stamp}\n"));
        if code != CL_SUCCESS {
            println!("cold build {i}: {code}\n{log}");
            return 1;
        }
        println!("cold build {i}: {took:.2} ms");
        times.push(took);
    }
    if !times.is_empty() {
        times.sort_by(f64::total_cmp);
        println!(
            "cold builds: median {:.2} ms, min {:.2}, max {:.2}",
            times[times.len() / 2],
            times[0],
            times[times.len() - 1]
        );
    }
    0
}

/// `stress`: see `cts_runner::stress`.
fn stress(args: &[String]) -> i32 {
    let Some((session, name)) = session_for(args) else { return 2 };
    let seconds = flag_values(args, "--seconds").pop().and_then(|s| s.parse().ok()).unwrap_or(10.0);
    let mut threads: Vec<usize> = flag_values(args, "--threads").iter().filter_map(|t| t.parse().ok()).collect();
    if threads.is_empty() {
        threads.push(8);
    }
    let faults = args.iter().any(|a| a == "--faults");
    let mut ok = true;
    for n in threads {
        match cts_runner::stress::run(&session, n, seconds, faults) {
            Ok(report) => {
                println!("stress on '{name}'\n{report}\n");
                ok &= report.ok();
            }
            Err(e) => {
                eprintln!("cts-runner: stress: {e}");
                ok = false;
            }
        }
    }
    i32::from(!ok)
}

/// `suite`: see `cts_runner::suite`.
/// The session on `--platform NAME` (default FerroCL); `None` after saying why.
fn session_for(args: &[String]) -> Option<(cts_runner::session::Session, String)> {
    let wanted = flag_values(args, "--platform").pop().unwrap_or_else(|| "FerroCL".into());
    cts_runner::session::Session::named(&wanted).map_err(|e| eprintln!("cts-runner: {e}")).ok()
}

fn suite(args: &[String]) -> i32 {
    use cts_runner::suite;
    let Some((session, name)) = session_for(args) else { return 2 };
    let programs = suite::Programs::default();
    let start = std::time::Instant::now();
    let mut cases = suite::kernels::cases(&programs);
    cases.extend(suite::async_copies::cases(&programs));
    cases.extend(suite::programs::cases());
    if args.iter().any(|a| a == "--selftest-failure") {
        cases.push(suite::failing_case());
    }
    let outcomes = suite::run(&session, cases, &flag_values(args, "--filter"));
    if outcomes.is_empty() {
        eprintln!("cts-runner: no case matches the filters");
        return 2;
    }
    println!("suite on '{name}', {:.1} s\n{}", start.elapsed().as_secs_f64(), suite::summary(&outcomes));
    if let Some(f) = flag_values(args, "--junit").pop() {
        suite::write(&f, &suite::junit(&name, &outcomes));
    }
    if let Some(f) = flag_values(args, "--json").pop() {
        suite::write(&f, &suite::to_json(&name, &outcomes));
    }
    i32::from(outcomes.iter().any(|o| matches!(o.verdict, suite::Verdict::Failed(_))))
}

/// `khronos`: see the module documentation of `cts_runner::khronos`.
/// `coverage [--platform NAME] [--std CL1.2,CL2.0,CL3.0] [--json FILE]`: which builtins
/// clang declares for the device's features and which the platform defines.
fn coverage(args: &[String]) -> i32 {
    use cts_runner::coverage;
    let Some((session, name)) = session_for(args) else { return 2 };
    let clang = match coverage::find_clang() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cts-runner: {e}");
            return 2;
        }
    };
    let features = coverage::device_features(&session);
    // FerroCL's own extensions, which clang does not declare, from the header FerroCL
    // includes into kernels.
    let extra = std::env::temp_dir().join(format!("cts-runner-extensions-{}.h", std::process::id()));
    let ours = features.iter().any(|f| f == "cl_khr_extended_async_copies") && name == "FerroCL";
    if ours {
        let _ = std::fs::write(&extra, include_str!("../../builtins/clc/ferrocl-extensions.h"));
    }
    let stds = flag_values(args, "--std").pop().unwrap_or_else(|| "CL1.2,CL2.0,CL3.0".into());
    let mut json = Vec::new();
    let mut complete = true;
    for std in stds.split(',') {
        let declared = coverage::defined_macros(&session, std, &features).and_then(|defined| {
            coverage::declarations(&clang, std, &features, &defined, ours.then_some(extra.as_path()))
        });
        let decls = match declared {
            Ok(d) => d,
            Err(e) => {
                eprintln!("cts-runner: {e}");
                return 2;
            }
        };
        let report = coverage::measure(&session, std, decls);
        println!("builtins on '{name}'\n{}", report.table());
        for e in &report.errors {
            println!("a batch failed to build:\n{e}\n");
        }
        complete &= report.errors.is_empty();
        for (d, f) in &report.results {
            json.push(format!(
                "{{\"std\": \"{std}\", \"family\": \"{}\", \"mangled\": \"{}\", \"result\": \"{f:?}\"}}",
                d.family(),
                d.mangled
            ));
        }
    }
    let _ = std::fs::remove_file(&extra);
    if let Some(f) = flag_values(args, "--json").pop() {
        cts_runner::suite::write(&f, &format!("[\n{}\n]\n", json.join(",\n")));
    }
    if complete {
        0
    } else {
        1
    }
}

fn khronos(args: &[String], have_platforms: bool) -> i32 {
    use cts_runner::khronos::{self, Test, Verdict, ASYNC_TESTS};
    // `--test-basic PATH` runs the async-copy tests by default; `--suite PATH` every test.
    // `--whole PATH`: the suite in one process, without test names.
    #[derive(PartialEq)]
    enum Pick {
        Async,
        Every,
        Whole,
    }
    let of = |flag: &str, pick: fn() -> Pick| {
        flag_values(args, flag).into_iter().map(move |p| (std::path::PathBuf::from(p), pick()))
    };
    let suites: Vec<_> = of("--test-basic", || Pick::Async)
        .chain(of("--suite", || Pick::Every))
        .chain(of("--whole", || Pick::Whole))
        .collect();
    if suites.is_empty() {
        eprintln!(
            "usage: cts-runner khronos (--suite PATH | --test-basic PATH | --whole PATH)... [--filter GLOB]... \
             [--platform NAME] [--jobs N] [--timeout SECS] [--junit FILE] [--json FILE]"
        );
        return 2;
    }
    if let Some((p, _)) = suites.iter().find(|(p, _)| !p.is_file()) {
        eprintln!(
            "cts-runner: {} is not a file: build the Khronos CTS (KhronosGroup/OpenCL-CTS) and pass its suite binaries",
            p.display()
        );
        return 2;
    }
    if !have_platforms {
        eprintln!("cts-runner: no OpenCL platform found (install one, e.g. FerroCL's .deb, or pass --ferrocl-build)");
        return 2;
    }
    let wanted = flag_values(args, "--platform").pop().unwrap_or_else(|| "FerroCL".into());
    let mut n = 0;
    cl!(clGetPlatformIDs(0, null_mut(), &mut n));
    let mut ps = vec![null_mut(); n as usize];
    cl!(clGetPlatformIDs(n, ps.as_mut_ptr(), null_mut()));
    let names: Vec<String> = ps.iter().map(|&p| platform_name(p)).collect();
    let Some(index) = names.iter().position(|p| p.to_lowercase().contains(&wanted.to_lowercase())) else {
        eprintln!("cts-runner: no platform named '{wanted}' (found: {})", names.join(", "));
        return 2;
    };
    // A filter matches a test's name or `suite/test`.
    let filters = flag_values(args, "--filter");
    let mut tests = Vec::new();
    for (binary, pick) in &suites {
        if *pick == Pick::Whole {
            tests.push(Test {
                binary: binary.clone(),
                name: String::new(),
                options: flag_values(args, "--cts-arg"),
                logs: flag_values(args, "--logs").pop().map(Into::into),
            });
            continue;
        }
        let async_default = *pick == Pick::Async;
        let available = match khronos::available(binary) {
            Ok(a) => a,
            Err(e) => {
                eprintln!("cts-runner: {e}");
                return 2;
            }
        };
        let suite = khronos::suite_name(binary);
        tests.extend(
            available
                .into_iter()
                .filter(|t| match filters.is_empty() {
                    true => !async_default || ASYNC_TESTS.contains(&t.as_str()),
                    false => filters.iter().any(|f| {
                        cts_runner::filter::glob(f, t) || cts_runner::filter::glob(f, &format!("{suite}/{t}"))
                    }),
                })
                .map(|name| Test {
                    binary: binary.clone(),
                    name,
                    options: flag_values(args, "--cts-arg"),
                    logs: flag_values(args, "--logs").pop().map(Into::into),
                }),
        );
    }
    if tests.is_empty() {
        eprintln!("cts-runner: no test matches");
        return 2;
    }
    let jobs = flag_values(args, "--jobs").pop().and_then(|j| j.parse().ok()).unwrap_or(2);
    let timeout = flag_values(args, "--timeout").pop().and_then(|t| t.parse().ok()).unwrap_or(1200);
    println!("running {} tests of {} suites on '{}' ({jobs} at a time)", tests.len(), suites.len(), names[index]);
    let env = vec![("CL_PLATFORM_INDEX".to_string(), index.to_string())];
    let start = std::time::Instant::now();
    let outcomes = khronos::run(&tests, &env, jobs, std::time::Duration::from_secs(timeout), &|o| {
        let name = format!("{}/{}", o.suite, o.test);
        println!("  {name:<72} {:>8.1} s  {}", o.seconds, verdict_text(&o.verdict));
    });
    println!("\n{:<72} {:>10} {:>9} {:>10}", "test", "result", "time, s", "configs");
    for o in &outcomes {
        let configs = match o.configs {
            0 => String::new(),
            c => format!("{}/{c}", c - o.skipped_configs),
        };
        let result = match &o.verdict {
            Verdict::Passed => "passed",
            Verdict::Skipped(_) => "skipped",
            Verdict::Failed(_) => "FAILED",
        };
        println!("{:<72} {result:>10} {:>9.1} {configs:>10}", format!("{}/{}", o.suite, o.test), o.seconds);
    }
    println!("\n{:<32} {:>8} {:>8} {:>8}", "suite", "passed", "skipped", "failed");
    let mut seen = Vec::new();
    for o in &outcomes {
        if !seen.contains(&o.suite) {
            let (p, s, f) = khronos::counts(&outcomes, Some(&o.suite));
            println!("{:<32} {p:>8} {s:>8} {f:>8}", o.suite);
            seen.push(o.suite.clone());
        }
    }
    let (passed, skipped, failed) = khronos::counts(&outcomes, None);
    println!(
        "\n{passed} passed, {skipped} skipped, {failed} failed in {:.0} s (configs: run/tried by the test)",
        start.elapsed().as_secs_f64()
    );
    for o in outcomes.iter().filter(|o| !matches!(o.verdict, Verdict::Passed)) {
        println!("  {}/{}: {}", o.suite, o.test, verdict_text(&o.verdict));
    }
    let as_suite = khronos::as_suite(&outcomes);
    if let Some(f) = flag_values(args, "--junit").pop() {
        cts_runner::suite::write(&f, &cts_runner::suite::junit(&names[index], &as_suite));
    }
    if let Some(f) = flag_values(args, "--json").pop() {
        cts_runner::suite::write(&f, &cts_runner::suite::to_json(&names[index], &as_suite));
    }
    i32::from(failed > 0)
}

fn verdict_text(v: &cts_runner::khronos::Verdict) -> String {
    use cts_runner::khronos::Verdict;
    match v {
        Verdict::Passed => "passed".into(),
        Verdict::Skipped(why) => format!("skipped: {why}"),
        Verdict::Failed(why) => format!("FAILED: {why}"),
    }
}

/// The values of a flag given as `FLAG VALUE` or `FLAG=VALUE`, in order.
fn flag_values(args: &[String], flag: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, a) in args.iter().enumerate() {
        if a == flag {
            out.extend(args.get(i + 1).cloned());
        } else if let Some(v) = a.strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
            out.push(v.to_string());
        }
    }
    out
}

/// `bench-one --platform NAME --warm FILE`: measures one platform (run by `bench` in a
/// child process) and prints `key=value` lines.
fn bench_one(args: &[String]) -> i32 {
    let only = bench_section(args);
    let warm = match only.as_deref() {
        Some("warm") | None => flag_values(args, "--warm").pop(),
        Some(_) => Some(String::new()),
    };
    let (Some(platform), Some(warm)) = (flag_values(args, "--platform").pop(), warm) else {
        eprintln!("usage: cts-runner bench-one --platform NAME --warm FILE [--only SECTION]");
        return 2;
    };
    match cts_runner::bench::measure(&platform, &warm, only.as_deref()) {
        Ok(values) => {
            for (k, v) in values {
                println!("{k}={v}");
            }
            0
        }
        Err(e) => {
            eprintln!("cts-runner: {platform}: {e}");
            1
        }
    }
}

/// The one section `--only SECTION` (or `--async-only`) asks for.
fn bench_section(args: &[String]) -> Option<String> {
    match args.iter().any(|a| a == "--async-only") {
        true => Some("async".into()),
        false => flag_values(args, "--only").pop(),
    }
}

/// FerroCL and its peers where the loader offers them, asked in a child so that no
/// driver loads into this process, which measures the host references.
fn peers_offered(exe: &std::path::Path) -> Vec<String> {
    let offered = std::process::Command::new(exe).arg("platforms").output().ok();
    let offered = offered.map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default();
    ["FerroCL", "Portable Computing Language", "Intel(R) OpenCL"]
        .into_iter()
        .filter(|p| offered.lines().any(|l| l == *p))
        .map(String::from)
        .collect()
}

/// `bench --only workers`: FerroCL's copy-worker sweep (`bench::workers`) in rounds of
/// three processes, `FERROCL_COPY_WORKERS=0`, `=model` and `=0` again; prints each
/// point's speed with workers over without (bests of the rounds), the band the two runs
/// without span, and the double-buffered kernel against its synchronous twin.
fn bench_workers(exe: &std::path::Path, warm: &std::path::Path, args: &[String]) -> i32 {
    use cts_runner::bench::workers::{chosen, group_counts, key, COPIES, COPY_ENV, SYNC_WORK, WORK};
    use std::collections::HashMap;
    // `--workers N` against none instead of the model (forced parts, for A/B runs);
    // `--copy NAME` sweeps only the copies whose names contain one of them.
    let with = flag_values(args, "--workers").pop().unwrap_or_else(|| "model".into());
    let copies = flag_values(args, "--copy").join("\n");
    // Best of the rounds for each of the three processes: on the 2-core machine one
    // round's band of the inline engine against itself spanned 0.66-1.70.
    let mut runs: Vec<HashMap<String, f64>> = vec![HashMap::new(); 3];
    for round in 0..WORKER_ROUNDS {
        for (i, mode) in ["0", with.as_str(), "0"].into_iter().enumerate() {
            let out = std::process::Command::new(exe)
                .args(["bench-one", "--platform", "FerroCL", "--warm"])
                .arg(warm)
                .args(["--only", "workers"])
                .env("FERROCL_COPY_WORKERS", mode)
                .env(COPY_ENV, &copies)
                .output();
            match out {
                Ok(o) if o.status.success() => {
                    let points = String::from_utf8_lossy(&o.stdout).into_owned();
                    for (k, v) in points.lines().filter_map(|l| l.split_once('=')) {
                        if let Ok(v) = v.parse::<f64>() {
                            let best = runs[i].entry(k.to_string()).or_insert(v);
                            *best = if round == 0 || k == "sweep_cores" { v } else { best.min(v) };
                        }
                    }
                }
                Ok(o) => {
                    eprintln!("cts-runner: FerroCL's sweep failed: {}", String::from_utf8_lossy(&o.stderr).trim());
                    return 1;
                }
                Err(e) => {
                    eprintln!("cts-runner: cannot run {}: {e}", exe.display());
                    return 1;
                }
            }
        }
    }
    let cores = runs[0].get("sweep_cores").copied().unwrap_or(1.0) as usize;
    let groups = group_counts(cores);
    let header = |title: String| {
        print!("{title:<44}");
        for g in &groups {
            print!("{g:>8}");
        }
        println!();
    };
    // One row of `value(groups)` for every group count, each kept in `into`.
    let row = |label: String, into: &mut Vec<f64>, value: &dyn Fn(usize) -> Option<f64>| {
        print!("{label:<44}");
        for &g in &groups {
            match value(g) {
                Some(v) => {
                    into.push(v);
                    print!("{v:>8.2}");
                }
                None => print!("{:>8}", "-"),
            }
        }
        println!();
    };
    let at = |run: usize, k: &str| runs[run].get(k).copied().filter(|&t| t > 0.0);
    header(format!("copy workers ({with}) / none ({cores} cores, best of {WORKER_ROUNDS}), groups:"));
    let (mut ratios, mut noise, mut twins) = (Vec::new(), Vec::new(), Vec::new());
    for (c, (copy, ..)) in COPIES.iter().enumerate().filter(|(_, c)| chosen(&copies, c.0)) {
        for (w, (work, _)) in WORK.iter().enumerate() {
            row(format!("  {copy}, compute {work}"), &mut ratios, &|g| {
                let k = key(c, w, g, false);
                Some(at(0, &k)? / at(1, &k)?)
            });
            for &g in &groups {
                for sync in [false, true] {
                    if let (Some(a), Some(b)) = (at(0, &key(c, w, g, sync)), at(2, &key(c, w, g, sync))) {
                        noise.push(a / b);
                    }
                }
            }
        }
    }
    // The twin waits for each copy as soon as it is made; without workers, it is what a
    // kernel copying by itself would run.
    header(format!("synchronous twin / double-buffered, compute {}:", WORK[SYNC_WORK].0));
    for (c, (copy, ..)) in COPIES.iter().enumerate().filter(|(_, c)| chosen(&copies, c.0)) {
        for (twin, run, label) in [(0, 0, "both without workers"), (0, 1, "twin without, double-buffered with")] {
            row(format!("  {copy}, {label}"), &mut twins, &|g| {
                Some(at(twin, &key(c, SYNC_WORK, g, true))? / at(run, &key(c, SYNC_WORK, g, false))?)
            });
        }
    }
    if noise.is_empty() {
        return 1;
    }
    let low = noise.iter().copied().fold(f64::INFINITY, f64::min);
    let high = noise.iter().copied().fold(0.0, f64::max);
    let geomean = |v: &[f64]| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp();
    println!("{:<44}{:>8.3}", "workers / none, geo. mean", geomean(&ratios));
    println!("{:<44}{:>8.3}{:>8.3}", "none / none (noise), lowest, highest", low, high);
    println!("{:<44}{:>8}", "points below that lowest", ratios.iter().filter(|&&r| r < low).count());
    0
}

/// Rounds of the copy-worker sweep's three processes.
const WORKER_ROUNDS: usize = 2;

/// `bench`: every platform in its own processes; a first process builds the warm
/// source so the measuring one finds it in the platform's cache.
fn bench(args: &[String]) -> i32 {
    use cts_runner::bench::async_copies::{host_memcpy_gbs, METRICS as ASYNC_METRICS};
    use cts_runner::bench::builds::METRICS as BUILD_METRICS;
    use cts_runner::bench::image::METRICS as IMAGE_METRICS;
    use cts_runner::bench::reduce::{host_sum_gbs, METRICS as REDUCE_METRICS};
    use cts_runner::bench::shapes::METRICS as SHAPE_METRICS;
    use cts_runner::bench::vector::{BUILTINS, METRICS as VECTOR_METRICS};
    use cts_runner::bench::{METRICS, SOURCE};
    use cts_runner::host::{host_saxpy_gbs, host_sgemm_gflops};
    let metrics: Vec<&(&str, &str, bool)> = METRICS
        .iter()
        .chain(BUILD_METRICS)
        .chain(VECTOR_METRICS)
        .chain(REDUCE_METRICS)
        .chain(SHAPE_METRICS)
        .chain(ASYNC_METRICS)
        .chain(IMAGE_METRICS)
        .collect();
    let exe = std::env::current_exe().unwrap_or_default();
    let mut platforms = flag_values(args, "--platform");
    if platforms.is_empty() {
        platforms = peers_offered(&exe);
    }
    // Saved program binaries: the children read the mode from the environment.
    for (flag, mode) in [("--save-binaries", "save"), ("--binaries", "load")] {
        if let Some(dir) = flag_values(args, flag).pop() {
            // SAFETY (of the environment write): no other thread runs yet.
            std::env::set_var(cts_runner::session::BINARIES_ENV, format!("{mode}:{dir}"));
        }
    }
    let warm = std::env::temp_dir().join(format!("ferrocl-bench-warm-{}.cl", std::process::id()));
    if bench_section(args).as_deref() == Some("workers") {
        return bench_workers(&exe, &warm, args);
    }
    // The references are measured before and after the platforms, and the better kept:
    // the machine's noise only ever lowers a bandwidth, and a reference caught in a
    // slow moment would flatter every ratio against it.
    let (host_before, memcpy_before, sgemm_before, sum_before) =
        (host_saxpy_gbs(), host_memcpy_gbs(), host_sgemm_gflops(), host_sum_gbs());
    let mut results: Vec<(String, std::collections::HashMap<String, f64>)> = Vec::new();
    for name in &platforms {
        let _ = std::fs::write(&warm, format!("{SOURCE}\n// warm {}\n", std::process::id()));
        let only: Vec<String> = bench_section(args).map(|s| vec!["--only".into(), s]).unwrap_or_default();
        // A section alone measures no warm build.
        let prebuild = match only.is_empty() {
            true => std::process::Command::new(&exe)
                .args(["bench-one", "--platform", name, "--warm"])
                .arg(&warm)
                .args(["--only", "warm"])
                .output()
                .map(drop),
            false => Ok(()),
        };
        let out = std::process::Command::new(&exe)
            .args(["bench-one", "--platform", name, "--warm"])
            .arg(&warm)
            .args(&only)
            .output();
        match (prebuild, out) {
            (Ok(_), Ok(o)) if o.status.success() => {
                let values = String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .filter_map(|l| l.split_once('='))
                    .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
                    .collect();
                results.push((name.clone(), values));
            }
            (_, Ok(o)) => eprintln!("cts-runner: skipping {name}: {}", String::from_utf8_lossy(&o.stderr).trim()),
            (_, Err(e)) => eprintln!("cts-runner: cannot run {}: {e}", exe.display()),
        }
    }
    let _ = std::fs::remove_file(&warm);
    if results.is_empty() {
        eprintln!("cts-runner: no platform could be measured");
        return 1;
    }
    let host = host_saxpy_gbs().max(host_before);
    let memcpy = host_memcpy_gbs().max(memcpy_before);
    let sgemm = host_sgemm_gflops().max(sgemm_before);
    let sum = host_sum_gbs().max(sum_before);
    let names: Vec<String> = results.iter().map(|(n, _)| n.chars().take(22).collect()).collect();
    print!("{:<58}", "metric");
    for n in &names {
        print!("{n:>24}");
    }
    for n in names.iter().skip(1) {
        print!("{:>16}", format!("{}/{}", &names[0][..names[0].len().min(7)], &n[..n.len().min(7)]));
    }
    println!();
    for (key, label, _) in metrics.iter().copied() {
        print!("{label:<58}");
        for (_, v) in &results {
            print!("{:>24}", v.get(*key).map_or("-".into(), |x| format!("{x:.3}")));
        }
        let first = results[0].1.get(*key).copied();
        for (_, v) in results.iter().skip(1) {
            let ratio = match (first, v.get(*key)) {
                (Some(a), Some(&b)) if b > 0.0 => format!("{:.2}x", a / b),
                _ => "-".into(),
            };
            print!("{ratio:>16}");
        }
        println!();
    }
    // Each vector builtin against the scalar loop it replaces, per platform.
    for (label, ..) in BUILTINS {
        let key = format!("vector_ratio_{label}");
        if results.iter().any(|(_, v)| v.contains_key(&key)) {
            print!("{:<58}", format!("  {label}: vector / scalar loop"));
            for (_, v) in &results {
                print!("{:>24}", v.get(&key).map_or("-".into(), |x| format!("{x:.3}")));
            }
            println!();
        }
    }
    println!("{:<58}{:>24.3}", "host saxpy, all cores, GB/s (reference)", host);
    println!("{:<58}{:>24.3}", "host memcpy, all cores, read+write GB/s (reference)", memcpy);
    println!("{:<58}{:>24.3}", "host SGEMM 512^3, all cores, GFLOP/s (reference)", sgemm);
    println!("{:<58}{:>24.3}", "host sum of 64 MiB floats, all cores, GB/s (reference)", sum);
    for (n, v) in &results {
        if let Some(s) = v.get("saxpy_gbs") {
            println!("{:<58}{:>23.1}%", format!("{n} saxpy / host saxpy"), 100.0 * s / host);
        }
        if let Some(s) = v.get("sgemm_gflops") {
            println!("{:<58}{:>23.1}%", format!("{n} SGEMM / host SGEMM"), 100.0 * s / sgemm);
        }
        for (key, what) in [("async_copy_gbs", "async copy"), ("copy2d_gbs", "2D tile copies")] {
            if let Some(s) = v.get(key) {
                println!("{:<58}{:>23.1}%", format!("{n} {what} / host memcpy"), 100.0 * s / memcpy);
            }
        }
        if let Some(s) = v.get("reduce_tree_gbs") {
            println!("{:<58}{:>23.1}%", format!("{n} tree reduction / host sum"), 100.0 * s / sum);
        }
    }
    if let Some(path) = flag_values(args, "--json").pop() {
        let body: Vec<String> = results
            .iter()
            .map(|(n, v)| {
                let fields: Vec<String> =
                    metrics.iter().filter_map(|(k, ..)| v.get(*k).map(|x| format!("\"{k}\": {x}"))).collect();
                format!("  \"{n}\": {{ {} }}", fields.join(", "))
            })
            .collect();
        let json =
            format!(
                "{{\n  \"host_saxpy_gbs\": {host},\n  \"host_memcpy_gbs\": {memcpy},\n  \"host_sgemm_gflops\": {sgemm},\n  \"host_sum_gbs\": {sum},\n{}\n}}\n",
                body.join(",\n")
            );
        if let Err(e) = std::fs::write(&path, json) {
            eprintln!("cts-runner: {path}: {e}");
            return 1;
        }
    }
    if let Some(path) = flag_values(args, "--svg").pop() {
        if let Err(e) = std::fs::write(&path, cts_runner::chart::svg(&metrics, &results)) {
            eprintln!("cts-runner: {path}: {e}");
            return 1;
        }
    }
    0
}
