// SPDX-License-Identifier: Apache-2.0
// ONNX Runtime (onnxruntime-node, CPU EP) latency of an ONNX model at several lengths:
// ../shared/peers/node/bench_ort.mjs with feeds for the graph's own inputs (ModernBERT, Gemma and
// Qwen have no token_type_ids). Copy into a writable copy of ../shared/peers/node (it needs its
// node_modules). Used by run_modernbert_peer.sh and run_llm_peer.sh.
// usage: node bench_ort_modernbert.mjs --model M.onnx --threads 1 --inputs DIR --seqs 512,2048
//          [--warmup 1] [--runs 5] [--budget 60] [--outdir DIR] [--dump-all 1]
// DIR/seq{S}.json holds {input_ids, attention_mask, ...} (int arrays, batch 1). Prints one JSON
// object (with init_ms and the process's peak_rss_bytes); writes last_hidden_state as raw float32
// to OUTDIR/seq{S}.f32, or with --dump-all every output NAME to OUTDIR/seq{S}.NAME.f32.
import * as ort from 'onnxruntime-node';
import fs from 'node:fs';
import path from 'node:path';

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => {
  if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1]]);
  return acc;
}, []));
const threads = parseInt(args.threads ?? '1');
const seqs = (args.seqs ?? '512,2048').split(',').map(Number);
const warmup = parseInt(args.warmup ?? '1');
const runs = parseInt(args.runs ?? '5');
const minRuns = Math.min(runs, 3);
const budgetNs = BigInt(Math.round(parseFloat(args.budget ?? '60') * 1e9));

const t0 = process.hrtime.bigint();
const session = await ort.InferenceSession.create(args.model, {
  executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1,
  executionMode: 'sequential', graphOptimizationLevel: 'all',
});
const initMs = Number(process.hrtime.bigint() - t0) / 1e6;
const result = { runtime: 'onnxruntime-node ' + ort.env.versions.common, model: args.model, threads, init_ms: initMs, seqs: {} };
for (const S of seqs) {
  const inp = JSON.parse(fs.readFileSync(path.join(args.inputs, `seq${S}.json`), 'utf8'));
  const feeds = {};
  for (const name of session.inputNames) {
    feeds[name] = new ort.Tensor('int64', BigInt64Array.from(inp[name].map(BigInt)), [1, S]);
  }
  let out;
  for (let i = 0; i < warmup; i++) out = await session.run(feeds);
  const times = [];
  const start = process.hrtime.bigint();
  while (times.length < runs) {
    const a = process.hrtime.bigint();
    out = await session.run(feeds);
    const b = process.hrtime.bigint();
    times.push(Number(b - a) / 1e6);
    if (times.length >= minRuns && b - start > budgetNs) break;
  }
  if (args.outdir) {
    fs.mkdirSync(args.outdir, { recursive: true });
    const names = args['dump-all'] ? session.outputNames : ['last_hidden_state'];
    for (const name of names) {
      const y = out[name];
      const file = args['dump-all'] ? `seq${S}.${name}.f32` : `seq${S}.f32`;
      fs.writeFileSync(path.join(args.outdir, file), Buffer.from(y.data.buffer, y.data.byteOffset, y.data.byteLength));
    }
  }
  const sorted = [...times].sort((p, q) => p - q);
  const mid = (sorted.length - 1) / 2;
  result.seqs[S] = { times_ms: times, median_ms: (sorted[Math.floor(mid)] + sorted[Math.ceil(mid)]) / 2, min_ms: sorted[0] };
}
result.peak_rss_bytes = process.resourceUsage().maxRSS * 1024;  // maxRSS is in KiB
console.log(JSON.stringify(result));
