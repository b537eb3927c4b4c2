// The bench's replies: deterministic texts of an exact length in characters (grapheme clusters),
// made here rather than in the web app, so the app's bundle carries no bench data. The bench page
// streams whichever it is given (`window.portalBenchReply`, web/src/bench.rs).

/** Sentences in several scripts, with ZWJ emoji, flags, keycaps, skin tones, combining accents,
 * conjuncts and conjoining jamo: clusters of one to seven code points. */
const SENTENCES = [
  'The committee reviewed the quarterly figures and found them sound. ',
  'Our family \u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}\u{200D}\u{1F466} flew home via \u{1F1EF}\u{1F1F5} and \u{1F1E9}\u{1F1EA} last spring; ',
  'press 1\u{FE0F}\u{20E3}, then #\u{FE0F}\u{20E3}, and wait for the tone. ',
  'The cafe\u{301} on the corner serves cre\u{300}me bru\u{302}le\u{301}e. ',
  '東京の天気は晴れです。明日は雨が降るでしょう。',
  '我们明天在图书馆见面。',
  'ภาษาไทยเขียนโดยไม่เว้นวรรคระหว่างคำ ',
  'नमस्ते, क्षमा कीजिए, आज का समाचार पढ़िए। ',
  '한국어 텍스트를 씁니다. 감사합니다! ',
  'Thumbs up \u{1F44D}\u{1F3FD} from the whole team \u{1F9D1}\u{200D}\u{1F4BB}, well done. ',
  'Old Hangul \u{1100}\u{1161}\u{11A8} still combines. ',
  'Figures: 3.14159, 2,718 and 1/3 of the 12 items were late. ',
];

/** Lines of code for the markdown reply's code blocks. */
const CODE_LINES = [
  'let frame = playout.tick(now_ms);',
  'for block in markdown.blocks() {',
  '    draw(&block, frame.caret);',
  '}',
  'if frame.done { settle(&reply); }',
  'let words: Vec<&str> = text.split_whitespace().collect();',
  'match event { Event::Text(t) => push(t), _ => {} }',
  '// 東京 → Tokyo, 한국어 → Korean',
  'assert_eq!(clusters("e\u{301}"), 1);',
  'return Ok(reply.trim_end().to_string());',
];

/** Display formulas and inline maths for the markdown reply with maths (`$$…$$` and `$…$`). */
const FORMULAS = [
  '\\int_0^\\infty e^{-x^2}\\,dx = \\frac{\\sqrt{\\pi}}{2}',
  '\\sum_{k=1}^{n} k^2 = \\frac{n(n+1)(2n+1)}{6}',
  'e^{i\\pi} + 1 = 0',
  '\\begin{pmatrix} a & b \\\\ c & d \\end{pmatrix}^{-1} = \\frac{1}{ad - bc}\\begin{pmatrix} d & -b \\\\ -c & a \\end{pmatrix}',
  '\\nabla \\cdot \\mathbf{E} = \\frac{\\rho}{\\varepsilon_0}',
];
const INLINE_MATHS = ['$E = mc^2$', '$\\alpha_i + \\beta^{2}$', '$\\sqrt{x^2 + y^2}$', '$O(n \\log n)$', '$\\frac{a}{b} \\le 1$'];

const graphemes = new Intl.Segmenter('und', { granularity: 'grapheme' });
const words = new Intl.Segmenter('und', { granularity: 'word' });
const clustersOf = (text) => [...graphemes.segment(text)].length;

/** A small linear congruential generator: the same reply (or chunks) on every run. */
export function lcg(seed) {
  let state = seed >>> 0;
  return (bound) => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return (state >>> 16) % bound;
  };
}

/** `text` cut to `chars` clusters; a cut at a block break would end on line breaks, each of which
 * becomes a full stop. */
function cut(text, chars) {
  let end = text.length;
  let count = 0;
  for (const { index } of graphemes.segment(text)) {
    if (count === chars) { end = index; break; }
    count += 1;
  }
  const kept = text.slice(0, end);
  const trimmed = kept.replace(/\n+$/, '');
  return trimmed + '.'.repeat(kept.length - trimmed.length);
}

/** Paragraphs of four to ten sentences separated by blank lines, with no other line breaks. */
export function proseReply(chars) {
  const below = lcg(0x5EED_F00D);
  let text = '';
  let clusters = 0;
  while (clusters < chars) {
    if (text) { text += '\n\n'; clusters += 2; }
    const count = 4 + below(7);
    for (let i = 0; i < count; i++) {
      const sentence = SENTENCES[below(SENTENCES.length)];
      text += sentence;
      clusters += clustersOf(sentence);
    }
  }
  return cut(text, chars);
}

/** The blocks replies use, each of chat size: headings, paragraphs with bold, italic, inline
 * code and links, bulleted, numbered and task lists, fenced code, tables and quotes; with `maths`
 * also display formulas (`$$` on their own lines) and paragraphs with inline maths (`$…$`), one
 * block in seven each. */
export function markdownReply(chars, { maths = false } = {}) {
  const below = lcg(0x00DD_BA11);
  const sentence = () => SENTENCES[below(SENTENCES.length)];
  // A sentence with one of its first words bold, italic, code or a link, or none.
  const decorated = () => {
    const plain = sentence();
    const candidates = [...words.segment(plain)]
      .filter(({ segment }) => /^[\p{Alphabetic}\p{N}]+$/u.test(segment));
    const chosen = candidates[below(3)];
    if (!chosen) return plain;
    const { index, segment } = chosen;
    const marked = [`**${segment}**`, `*${segment}*`, `\`${segment}\``,
      `[${segment}](https://example.com/${below(1000)})`, segment][below(5)];
    return plain.slice(0, index) + marked + plain.slice(index + segment.length);
  };
  const list = (marker) => Array.from({ length: 3 + below(5) },
    (_, i) => `${marker(i)}${decorated().trimEnd()}`).join('\n');
  const table = () => {
    const rows = ['| Script | Sample | Count |', '|---|---|---:|'];
    const count = 3 + below(6);
    for (let i = 0; i < count; i++) {
      const sample = [...graphemes.segment(sentence())].slice(0, 12).map((s) => s.segment).join('');
      const script = ['Latin', '日本語', 'ไทย', 'हिन्दी', '한국어', 'Emoji 👩🏽‍💻'][below(6)];
      rows.push(`| ${script} | ${sample.trim().replaceAll('|', '/')} | ${below(10_000)} |`);
    }
    return rows.join('\n');
  };
  let text = '';
  let clusters = 0;
  let section = 0;
  while (clusters < chars) {
    if (text) { text += '\n\n'; clusters += 2; }
    let block;
    switch (below(maths ? 14 : 12)) {
      case 0: section += 1; block = `## ${section}. ${sentence().trimEnd()}`; break;
      case 1: case 2: case 3: case 4:
        block = Array.from({ length: 2 + below(4) }, decorated).join('').trimEnd(); break;
      case 5: block = list(() => '- '); break;
      case 6: block = list((i) => `${i + 1}. `); break;
      case 7: block = list((i) => (i % 2 === 0 ? '- [x] ' : '- [ ] ')); break;
      case 8: case 9: {
        const lines = Array.from({ length: 4 + below(9) }, () => CODE_LINES[below(CODE_LINES.length)]);
        block = `\`\`\`rust\n${lines.join('\n')}\n\`\`\``;
        break;
      }
      case 10: block = table(); break;
      case 12: block = `$$\n${FORMULAS[below(FORMULAS.length)]}\n$$`; break;
      case 13:
        block = `${decorated()}The bound is ${INLINE_MATHS[below(INLINE_MATHS.length)]} here. ${decorated()}`.trimEnd();
        break;
      default: block = `> ${decorated().trimEnd()}`;
    }
    clusters += clustersOf(block);
    text += block;
  }
  return cut(text, chars);
}
