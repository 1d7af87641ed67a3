// SPDX-License-Identifier: Apache-2.0
// Reference encodings from HuggingFace's own tokenizers library (Rust, through the npm module
// @anush008/tokenizers): reads a tokenizer (a tokenizer.json, or a BERT vocab.txt from which the
// tokenizer.json of BertTokenizerFast is built, as transformers' BertConverter writes it, with
// do_lower_case / tokenize_chinese_chars from a tokenizer_config.json beside it) and a
// JSON-lines file of {"text", "pair"} inputs,
// and prints one JSON object per input in edgebert-tokenize's format, offsets converted from code
// points to UTF-8 bytes of that input's own text.
// Usage: node hf_encode.js TOKENIZER INPUTS.jsonl [--max-length N] [--bench]
//        node hf_encode.js VOCAB_DIR --save-json OUT   (writes the BERT tokenizer.json it builds)
'use strict';
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require('@anush008/tokenizers');

function bertTokenizerJson(vocabPath, template) {
  const tokens = fs.readFileSync(vocabPath, 'utf8').split('\n');
  if (tokens.length && tokens[tokens.length - 1] === '') tokens.pop();
  const vocab = {};
  tokens.forEach((t, i) => { vocab[t.replace(/\r$/, '')] = i; });
  const configPath = path.join(path.dirname(vocabPath), 'tokenizer_config.json');
  const config = fs.existsSync(configPath) ? JSON.parse(fs.readFileSync(configPath, 'utf8')) : {};
  const lowercase = config.do_lower_case !== false, chinese = config.tokenize_chinese_chars !== false;
  const specials = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'].filter((t) => t in vocab);
  const special = (t) => ({ SpecialToken: { id: t, type_id: 0 } });
  const seq = (id, typeId) => ({ Sequence: { id, type_id: typeId } });
  const post = template
    ? { type: 'TemplateProcessing', single: [special('[CLS]'), seq('A', 0), special('[SEP]')],
        pair: [special('[CLS]'), seq('A', 0), special('[SEP]'), seq('B', 1), { SpecialToken: { id: '[SEP]', type_id: 1 } }],
        special_tokens: { '[CLS]': { id: '[CLS]', ids: [vocab['[CLS]']], tokens: ['[CLS]'] },
                          '[SEP]': { id: '[SEP]', ids: [vocab['[SEP]']], tokens: ['[SEP]'] } } }
    : { type: 'BertProcessing', sep: ['[SEP]', vocab['[SEP]']], cls: ['[CLS]', vocab['[CLS]']] };
  return JSON.stringify({
    version: '1.0', truncation: null, padding: null,
    added_tokens: specials.map((t) => ({ id: vocab[t], content: t, single_word: false, lstrip: false,
                                          rstrip: false, normalized: false, special: true })),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: chinese,
                  strip_accents: null, lowercase },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: post,
    decoder: null,
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##',
             max_input_chars_per_word: 100, vocab },
  });
}

function loadTokenizer(p) {
  if (fs.statSync(p).isDirectory()) {
    if (fs.existsSync(path.join(p, 'tokenizer.json'))) return Tokenizer.fromFile(path.join(p, 'tokenizer.json'));
    return Tokenizer.fromString(bertTokenizerJson(path.join(p, 'vocab.txt'), true));
  }
  if (p.endsWith('.txt')) return Tokenizer.fromString(bertTokenizerJson(p, true));
  return Tokenizer.fromFile(p);
}

// Byte offset of every code point boundary of s (index = code point index).
function byteOffsets(s) {
  const out = [0];
  let b = 0;
  for (const ch of s) {
    const c = ch.codePointAt(0);
    b += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    out.push(b);
  }
  return out;
}

async function main() {
  const args = process.argv.slice(2);
  let maxLength = 0, bench = false;
  const pos = [];
  if (args.length === 3 && args[1] === '--save-json') {
    fs.writeFileSync(args[2], bertTokenizerJson(path.join(args[0], 'vocab.txt'), false));
    return;
  }
  for (let i = 0; i < args.length; ++i) {
    if (args[i] === '--max-length') maxLength = parseInt(args[++i], 10);
    else if (args[i] === '--bench') bench = true;
    else pos.push(args[i]);
  }
  if (pos.length !== 2) { console.error('usage: node hf_encode.js TOKENIZER INPUTS.jsonl [--max-length N] [--bench]'); process.exit(2); }
  const tok = loadTokenizer(pos[0]);
  if (maxLength > 0) tok.setTruncation(maxLength, { strategy: 'LongestFirst' });
  const inputs = fs.readFileSync(pos[1], 'utf8').split('\n').filter((l) => l.length).map((l) => JSON.parse(l));
  if (bench) {
    // Single-thread throughput of encodeBatch (RAYON_NUM_THREADS=1 set by the caller).
    const texts = inputs.map((x) => x.text);
    const bytes = texts.reduce((a, t) => a + Buffer.byteLength(t, 'utf8'), 0);
    await tok.encodeBatch(texts.slice(0, 100));
    let best = Infinity, tokens = 0;
    for (let r = 0; r < 5; ++r) {
      const t0 = process.hrtime.bigint();
      const encs = await tok.encodeBatch(texts);
      const dt = Number(process.hrtime.bigint() - t0) / 1e9;
      tokens = encs.reduce((a, e) => a + e.getIds().length, 0);
      best = Math.min(best, dt);
    }
    console.log(JSON.stringify({ texts: texts.length, bytes, tokens, seconds: best,
                                 mb_per_s: bytes / 1e6 / best, tokens_per_s: tokens / best }));
    return;
  }
  const lines = [];
  for (const x of inputs) {
    const e = await tok.encode(x.text, x.pair === undefined ? null : x.pair, { addSpecialTokens: true });
    const seq = e.getSequenceIds();
    const maps = [byteOffsets(x.text), x.pair === undefined ? null : byteOffsets(x.pair)];
    const offsets = e.getOffsets().map(([b, en], i) => {
      const m = maps[seq[i] === 1 ? 1 : 0];
      return seq[i] === null || seq[i] === undefined ? [0, 0] : [m[b], m[en]];
    });
    const nz = (v) => (v === undefined ? null : v);
    lines.push(JSON.stringify({ ids: e.getIds(), type_ids: e.getTypeIds(), offsets, char_offsets: e.getOffsets(),
                                word_ids: e.getWordIds().map(nz), sequence_ids: seq.map(nz) }));
  }
  process.stdout.write(lines.join('\n') + (lines.length ? '\n' : ''));
}
main().catch((err) => { console.error('hf_encode: ' + err); process.exit(1); });
