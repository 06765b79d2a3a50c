// Side-by-side images/s of frugal's CPU executor and ONNX Runtime (CPU execution
// provider) on the same ONNX file, the same input and the same thread count.
// A hand-run benchmark, not part of CI: see README.md next to this file.
//
// ORT runs in this process; frugal runs in a long-lived `frugal` process
// (frugal_side.lua) that this driver tells to run. Rounds alternate the engines
// (and which one goes first), so machine noise hits both alike; model load and
// process start are outside the timed part on both sides.
import { spawn, execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { once } from 'node:events';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');

const usage = `usage: node compare.mjs [--frugal PATH] [--models resnet50,resnet18,...] [--batches 1,8]
                         [--threads N] [--rounds R] [--warmup W] [--gap-ms G] [--tolerance T]
                         [--workdir DIR] [--json FILE]
  --frugal PATH    the frugal executable (default: $FRUGAL, else <repo>/build/frugal); its
                   cpu plugin is found next to it as usual
  --models LIST    zoo networks (default resnet50,resnet18,mobilenet_v2,squeezenet1_1),
                   written with \`frugal zoo NAME -o DIR/NAME.onnx\`; a path ending in .onnx
                   is used as it is
  --batches LIST   batch sizes (default 1,8)
  --threads N      threads of both engines (default 2): ORT intra_op N, inter_op 1;
                   frugal {"threads": N}
  --rounds R       timed rounds per engine (default 7; the median is reported, >= 5)
  --warmup W       untimed interleaved rounds first (default 2)
  --gap-ms G       pause between two engines' turns (default 100), so that neither's
                   idle threads (ORT's spin for a while after a run) eat the other's turn
  --tolerance T    largest max|frugal - ORT| / max|ORT| counted as agreeing (default 1e-3)
  --workdir DIR    where models, inputs and outputs go (default: a fresh folder in /tmp)
  --json FILE      also write every measurement as JSON`;

function parseArgs(argv) {
  const a = {
    frugal: process.env.FRUGAL || path.join(repo, 'build', 'frugal'),
    models: ['resnet50', 'resnet18', 'mobilenet_v2', 'squeezenet1_1'],
    batches: [1, 8],
    threads: 2,
    rounds: 7,
    warmup: 2,
    gapMs: 100,
    tolerance: 1e-3,
    workdir: null,
    json: null,
  };
  const integer = (name, v, min) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) fail(`${name} must be an integer >= ${min}, got '${v}'`, 2);
    return n;
  };
  for (let i = 0; i < argv.length; ++i) {
    const opt = argv[i];
    if (opt === '--help' || opt === '-h') {
      console.log(usage);
      process.exit(0);
    }
    if (i + 1 >= argv.length) fail(`${opt}: ${opt.startsWith('--') ? 'needs a value' : 'unknown argument'}\n${usage}`, 2);
    const v = argv[++i];
    switch (opt) {
      case '--frugal': a.frugal = path.resolve(v); break;
      case '--models': a.models = v.split(',').filter(Boolean); break;
      case '--batches': a.batches = v.split(',').map((b) => integer('--batches', b, 1)); break;
      case '--threads': a.threads = integer('--threads', v, 1); break;
      case '--rounds': a.rounds = integer('--rounds', v, 5); break;
      case '--warmup': a.warmup = integer('--warmup', v, 0); break;
      case '--gap-ms': a.gapMs = integer('--gap-ms', v, 0); break;
      case '--tolerance': a.tolerance = Number(v); break;
      case '--workdir': a.workdir = path.resolve(v); break;
      case '--json': a.json = path.resolve(v); break;
      default: fail(`unknown option '${opt}'\n${usage}`, 2);
    }
  }
  if (!(a.tolerance > 0)) fail(`--tolerance must be a positive number`, 2);
  if (a.models.length === 0 || a.batches.length === 0) fail('--models and --batches need at least one value', 2);
  return a;
}

function fail(msg, code = 1) {
  process.stderr.write(`compare: ${msg}\n`);
  process.exit(code);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const nowSeconds = () => Number(process.hrtime.bigint()) / 1e9;

// Resident memory of a process in MB from /proc (Linux): `VmHWM` its peak, `VmRSS` now; null elsewhere.
function residentMB(pid, field) {
  try {
    const m = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

function median(v) {
  const s = [...v].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : 0.5 * (s[m - 1] + s[m]);
}

// ---- .npy (version 1.0, little-endian float32, C order) ----

function writeNpy(file, shape, data) {
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  const unpadded = 10 + header.length + 1;
  header += ' '.repeat((64 - (unpadded % 64)) % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1;
  pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

function readNpy(file) {
  const b = fs.readFileSync(file);
  if (b.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file} is not a .npy file`);
  const major = b[6];
  const hlen = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = b.toString('latin1', start, start + hlen);
  if (!header.includes("'<f4'")) throw new Error(`${file}: expected float32 ('<f4'), header ${header.trim()}`);
  const shape = header.match(/'shape':\s*\(([^)]*)\)/)[1].split(',').map((s) => s.trim()).filter(Boolean).map(Number);
  const bytes = b.subarray(start + hlen);
  const data = new Float32Array(bytes.byteLength / 4);
  Buffer.from(data.buffer).set(bytes);  // copy: the file's buffer need not be 4-byte aligned
  return { shape, data };
}

// Uniform in [-1, 1), the same stream for a given seed (mulberry32).
function randomInput(n, seed) {
  let s = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; ++i) {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1;
  }
  return out;
}

// ---- the frugal side: a long-lived process that answers one line per command ----

class FrugalSide {
  constructor(frugal, model, threads) {
    this.what = `${frugal} frugal_side.lua ${model}`;
    this.proc = spawn(frugal, [path.join(here, 'frugal_side.lua'), model, String(threads)], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    this.proc.stdin.on('error', () => {});  // a dead process shows as its exit code in reply()
    this.lines = readline.createInterface({ input: this.proc.stdout })[Symbol.asyncIterator]();
    this.exited = once(this.proc, 'exit').then(([code]) => code);
  }

  async reply() {
    const next = await Promise.race([this.lines.next(), this.exited.then((code) => ({ exit: code }))]);
    if (next.exit !== undefined || next.done) throw new Error(`${this.what} stopped (exit code ${next.exit ?? '?'})`);
    if (next.value.startsWith('error ')) throw new Error(`${this.what}: ${next.value.slice(6)}`);
    return next.value;
  }

  async ask(line) {
    this.proc.stdin.write(line + '\n');
    return this.reply();
  }

  async quit() {
    this.proc.stdin.end('quit\n');
    await this.exited;
  }
}

// ---- the machine line ----

function machine(a, ort) {
  const cpuinfo = fs.readFileSync('/proc/cpuinfo', 'utf8');
  const model = (cpuinfo.match(/^model name\s*:\s*(.*)$/m) || [, os.cpus()[0]?.model || '?'])[1];
  let openblas = 'unknown';
  try {
    openblas = execFileSync('dpkg-query', ['-W', '-f', '${db:Status-Abbrev}${Package} ${Version}\\n', 'libopenblas0*'], {
      encoding: 'utf8',
    })
      .split('\n')
      .filter((l) => l.startsWith('ii '))
      .map((l) => l.slice(3).trim())
      .join(', ');
  } catch {
    // not a Debian system: leave it unknown
  }
  let frugalVersion = '?';
  try {
    frugalVersion = execFileSync(a.frugal, ['--version'], { encoding: 'utf8' }).trim();
  } catch (e) {
    fail(`cannot run ${a.frugal} (--frugal PATH or $FRUGAL): ${e.message}`);
  }
  let commit = '?';
  try {
    commit = execFileSync('git', ['-C', repo, 'rev-parse', '--short', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    // not a git checkout
  }
  return {
    cpu: model,
    cores: os.cpus().length,
    usable: os.availableParallelism ? os.availableParallelism() : os.cpus().length,
    ort: ort.env.versions.node || ort.env.versions.common,
    openblas,
    frugal: `${frugalVersion} (checkout at ${commit} when this ran; the binary may be older)`,
    node: process.version,
  };
}

const fmtLoad = (l) => l.map((x) => x.toFixed(2)).join(' ');

// ---- one network at one batch size ----

async function compareOne(a, ort, session, modelFile, name, batch, sampleShape) {
  const shape = [batch, ...sampleShape];
  const n = shape.reduce((x, y) => x * y, 1);
  const x = randomInput(n, 1000 + batch);
  const inFile = path.join(a.workdir, `${name}-b${batch}-input.npy`);
  const outFile = path.join(a.workdir, `${name}-b${batch}-frugal-output.npy`);
  writeNpy(inFile, shape, x);

  const frugal = new FrugalSide(a.frugal, modelFile, a.threads);
  try {
    await frugal.reply();  // "ready": the model is loaded
    const budget = Number((await frugal.ask(`input ${inFile}`)).split(' ')[1]);
    await frugal.ask(`save ${outFile}`);
    const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', x, shape) };
    const ortOut = (await session.run(feeds))[session.outputNames[0]];

    // Agreement first: a throughput comparison of outputs that differ means nothing.
    const fOut = readNpy(outFile);
    if (fOut.shape.join(',') !== ortOut.dims.join(','))
      throw new Error(`${name} batch ${batch}: output shapes differ: frugal [${fOut.shape}] vs ORT [${ortOut.dims}]`);
    let maxDiff = 0;
    let scale = 0;
    for (let i = 0; i < ortOut.data.length; ++i) {
      maxDiff = Math.max(maxDiff, Math.abs(fOut.data[i] - ortOut.data[i]));
      scale = Math.max(scale, Math.abs(ortOut.data[i]));
    }
    const relDiff = scale > 0 ? maxDiff / scale : maxDiff;

    const t = { ort: [], frugal: [], frugalOwn: [], frugalHost: [], ping: [] };
    const turn = {
      ort: async (timed) => {
        const t0 = nowSeconds();
        await session.run(feeds);
        if (timed) t.ort.push(nowSeconds() - t0);
      },
      frugal: async (timed) => {
        const p0 = nowSeconds();
        await frugal.ask('ping');  // the pipe round trip alone, right before: how much of a "run" is not frugal's
        if (timed) t.ping.push(nowSeconds() - p0);
        const t0 = nowSeconds();
        const [, own, host] = (await frugal.ask('run')).split(' ').map(Number);
        if (timed) {
          t.frugal.push(nowSeconds() - t0);
          t.frugalOwn.push(own);
          t.frugalHost.push(host);
        }
      },
    };
    for (let r = 0; r < a.warmup + a.rounds; ++r) {
      const timed = r >= a.warmup;
      const order = r % 2 ? ['frugal', 'ort'] : ['ort', 'frugal'];  // neither always goes first
      for (const engine of order) {
        await sleep(a.gapMs);
        await turn[engine](timed);
      }
      if (process.stderr.isTTY) process.stderr.write(`\r${name} batch ${batch}: round ${r + 1}/${a.warmup + a.rounds}   `);
    }
    if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
    // Resident memory after the timed rounds: frugal's process peak (it holds only this
    // model); ORT's process now (this Node process holds Node, ORT and this session).
    const rss = { frugal_peak_mb: residentMB(frugal.proc.pid, 'VmHWM'), ort_now_mb: residentMB(process.pid, 'VmRSS') };
    const rate = (times) => {
      const ips = times.map((s) => batch / s);
      return { median: batch / median(times), min: Math.min(...ips), max: Math.max(...ips) };
    };
    return {
      network: name,
      batch,
      ort: rate(t.ort),
      frugal: rate(t.frugal),
      frugal_own_clock: rate(t.frugalOwn),
      // Each engine timed inside its own process around its run call (ORT: session.run in
      // Node; frugal: ex:run in Lua): no pipe, as ORT has none.
      frugal_in_host: rate(t.frugalHost),
      ratio_in_host: median(t.ort) / median(t.frugalHost),
      ping_seconds: median(t.ping),
      ratio: median(t.ort) / median(t.frugal),
      // The same ratio within each round (both engines saw about the same machine).
      round_ratios: t.ort.map((o, i) => o / t.frugal[i]),
      max_abs_diff: maxDiff,
      output_scale: scale,
      rel_diff: relDiff,
      agree: relDiff <= a.tolerance,
      frugal_arena_bytes: budget,
      rss,
      seconds: t,
    };
  } finally {
    await frugal.quit().catch(() => {});
  }
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  let ort;
  try {
    ort = require('onnxruntime-node');
  } catch (e) {
    fail(`onnxruntime-node is not installed: run \`npm ci\` in ${here} (${e.message})`);
  }
  a.workdir = a.workdir || fs.mkdtempSync(path.join(os.tmpdir(), 'ort-compare-'));
  fs.mkdirSync(a.workdir, { recursive: true });
  const m = machine(a, ort);
  const loadStart = os.loadavg();
  const rows = [];

  for (const spec of a.models) {
    let modelFile = spec;
    let name = path.basename(spec, '.onnx');
    if (!spec.endsWith('.onnx')) {
      modelFile = path.join(a.workdir, `${spec}.onnx`);
      try {
        execFileSync(a.frugal, ['zoo', spec, '-o', modelFile], { stdio: ['ignore', 'ignore', 'pipe'] });
      } catch (e) {
        fail(`frugal zoo ${spec} failed: ${e.stderr?.toString().trim() || e.message}`);
      }
    } else if (!fs.existsSync(modelFile)) {
      fail(`no such model file: ${modelFile}`);
    }
    // ORT_ENABLE_ALL ('all') is ORT's default: it folds BatchNorm into Conv and fuses
    // Conv+Relu/Clip and more; stated here so that nobody has to look it up.
    const session = await ort.InferenceSession.create(modelFile, {
      executionProviders: ['cpu'],
      graphOptimizationLevel: 'all',
      intraOpNumThreads: a.threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
    });
    const meta = session.inputMetadata?.[0];
    const sampleShape = meta?.shape ? meta.shape.slice(1).map(Number) : [3, 224, 224];
    if (sampleShape.some((d) => !Number.isInteger(d) || d < 1))
      fail(`${modelFile}: input '${session.inputNames[0]}' has a symbolic dimension besides the batch: [${meta.shape}]`);
    for (const batch of a.batches) {
      try {
        rows.push(await compareOne(a, ort, session, modelFile, name, batch, sampleShape));
      } catch (e) {
        fail(e.message);
      }
    }
    await session.release();
  }
  const loadEnd = os.loadavg();

  console.log(`machine   ${m.cpu}, ${m.cores} cores (${m.usable} usable); load average (1/5/15 min) ${fmtLoad(loadStart)} at the start, ${fmtLoad(loadEnd)} at the end`);
  console.log(`engines   ONNX Runtime ${m.ort} (onnxruntime-node, CPU EP, graph optimisation ORT_ENABLE_ALL: BatchNorm folded, Conv+activation fused); ${m.frugal} cpu executor, OpenBLAS ${m.openblas}; Node ${m.node}`);
  console.log(`threads   ${a.threads} (ORT intra_op ${a.threads}, inter_op 1; frugal {"threads": ${a.threads}}); ${a.rounds} timed rounds after ${a.warmup} warm-up, engines alternating, median`);
  console.log('');
  const head = ['network', 'batch', 'ORT img/s', '(min-max)', 'frugal img/s', '(min-max)', 'frugal/ORT', '(per round)',
    'own clock', 'in host', 'in host/ORT', 'pipe ms', 'max|diff|/max|ORT|', '', 'RSS MB ORT', 'frugal'];
  const w = [13, 5, 9, 13, 12, 13, 10, 11, 9, 8, 11, 7, 18, 6, 10, 6];
  const line = (cells) => cells.map((c, i) => (i === 0 ? String(c).padEnd(w[i]) : String(c).padStart(w[i]))).join(' ');
  console.log(line(head));
  const mb = (v) => (v === null ? '?' : v.toFixed(0));
  const span = (r) => `(${r.min.toFixed(1)}-${r.max.toFixed(1)})`;
  for (const r of rows)
    console.log(line([r.network, r.batch, r.ort.median.toFixed(2), span(r.ort), r.frugal.median.toFixed(2), span(r.frugal),
      `${(100 * r.ratio).toFixed(0)}%`,
      `(${(100 * Math.min(...r.round_ratios)).toFixed(0)}-${(100 * Math.max(...r.round_ratios)).toFixed(0)}%)`,
      r.frugal_own_clock.median.toFixed(2), r.frugal_in_host.median.toFixed(2), `${(100 * r.ratio_in_host).toFixed(0)}%`,
      (1e3 * r.ping_seconds).toFixed(2), r.rel_diff.toExponential(1), r.agree ? 'agree' : 'DIFFER',
      mb(r.rss.ort_now_mb), mb(r.rss.frugal_peak_mb)]));
  console.log('');
  console.log('img/s: batch / median seconds of one run; ORT timed around session.run, frugal around a "run" round trip to its');
  console.log('process (so it includes a pipe round trip and the Lua binding). frugal/ORT: frugal img/s over ORT img/s (medians);');
  console.log('per round: the same ratio within each round, min-max. own clock: frugal img/s by the executor\'s own timer (input');
  console.log('copy-in to output copy-out, no binding, no pipe). in host: frugal img/s timed inside its process around the Lua');
  console.log('call ex:run (binding and output tensor included, no pipe), as ORT is timed inside Node around session.run; in');
  console.log('host/ORT: that over ORT img/s. pipe ms: median round trip of an empty command, timed before each');
  console.log('run. max|diff|/max|ORT|: largest output difference over the largest |output| (ORT\'s). RSS MB: resident memory after');
  console.log('the timed rounds: ORT the Node process now (Node and ORT themselves, about 50 MB, included; sessions of earlier');
  console.log('networks released), frugal its process\'s peak (VmHWM: loading included).');
  if (rows.some((r) => !r.agree)) console.log(`DIFFER: above --tolerance ${a.tolerance}; that row's speed comparison is not meaningful.`);
  if (a.json) fs.writeFileSync(a.json, JSON.stringify({ machine: m, load_start: loadStart, load_end: loadEnd, options: a, rows }, null, 2));
  process.exit(rows.every((r) => r.agree) ? 0 : 3);
}

main().catch((e) => fail(e.stack || e.message));
