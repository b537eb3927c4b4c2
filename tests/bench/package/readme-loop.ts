// The README's "Markdown while a reply plays out" loop, exactly as wasm-pkg/npm/README.md shows
// it: Playout ticked on every animation frame until done, each frame's new text pushed to
// StreamingMarkdown, and every block the update names drawn again whole by a straightforward
// `draw(block)` that builds elements with text nodes only.
import init, {
  Playout,
  StreamingMarkdown,
  type MarkdownBlock,
  type MarkdownInline,
  type MarkdownUpdate,
} from "portal-wasm/web";
import wasmUrl from "portal-wasm/portal_wasm_bg.wasm";
import { body, settled, stream } from "./source";

await init({ module_or_path: wasmUrl });

const element = <K extends keyof HTMLElementTagNameMap>(tag: K, children: Node[] = []) => {
  const made = document.createElement(tag);
  made.append(...children);
  return made;
};
const text = (data: string) => document.createTextNode(data);

function inline(node: MarkdownInline): Node {
  switch (node.kind) {
    case "text": return text(node.text);
    case "emphasis": return element("em", node.content.map(inline));
    case "strong": return element("strong", node.content.map(inline));
    case "strikethrough": return element("del", node.content.map(inline));
    case "code": case "math": return element("code", [text(node.text)]);
    case "link": {
      if (node.href === null) return element("span", node.content.map(inline));
      const link = element("a", node.content.map(inline));
      link.href = node.href;
      return link;
    }
    case "softBreak": return text(" ");
    case "hardBreak": return element("br");
  }
}

/** One block as elements, every string as a text node. */
function drawBlock(block: MarkdownBlock): HTMLElement {
  switch (block.kind) {
    case "paragraph": return element("p", block.content.map(inline));
    case "heading": return element(`h${block.level}`, block.content.map(inline));
    case "quote": return element("blockquote", block.blocks.map(drawBlock));
    case "list": {
      const list = block.start === null ? element("ul") : element("ol");
      if (block.start !== null) (list as HTMLOListElement).start = block.start;
      for (const item of block.items) {
        const li = element("li");
        if (item.task !== null) {
          const box = element("input");
          box.type = "checkbox";
          box.checked = item.task;
          box.disabled = true;
          li.append(box);
        }
        li.append(...item.blocks.map(drawBlock));
        list.append(li);
      }
      return list;
    }
    case "code": return element("pre", [element("code", block.content.map((t) => text(t.text)))]);
    case "table": {
      const row = (cells: MarkdownInline[][], tag: "th" | "td") =>
        element("tr", cells.map((cell) => element(tag, cell.map(inline))));
      return element("table", [element("thead", [row(block.head, "th")]),
        element("tbody", block.rows.map((cells) => row(cells, "td")))]);
    }
    case "rule": return element("hr");
    case "html": return element("pre", block.content.map((t) => text(t.text)));
  }
}

// The README's `draw`: the block drawn, and kept beside its element for the bench's measure.
const drawnBlocks = new WeakMap<HTMLElement, MarkdownBlock>();
function draw(block: MarkdownBlock): HTMLElement {
  const drawnBlock = drawBlock(block);
  drawnBlocks.set(drawnBlock, block);
  return drawnBlock;
}

// The README's code, from here to `onFrame`.
const reply = body;
const markdown = new StreamingMarkdown();
const drawn: HTMLElement[] = []; // one element per block

function apply(update: MarkdownUpdate) {
  for (const index of update.redrawn) drawn[index].replaceWith((drawn[index] = draw(markdown.block(index)!)));
  for (const stale of drawn.splice(update.unchanged)) stale.remove();
  for (const block of markdown.blocks(update.unchanged)) reply.append((drawn[drawn.length] = draw(block)));
}
// In the animation frame, after `const frame = playout.tick(now)`:
function onFrame(frame: { newText: string; done: boolean }) {
  apply(markdown.push(frame.newText));
  if (frame.done) apply(markdown.finish());
}

// The README's playout loop, fed by the stream.
const playout = new Playout();
let ticking = false;
const report = stream(
  (chunk) => {
    playout.push(chunk, performance.now());
    if (!ticking) {
      ticking = true;
      requestAnimationFrame(function frame(now) {
        const played = playout.tick(now);
        onFrame(played);
        if (!played.done) requestAnimationFrame(frame);
        else settled(report);
      });
    }
  },
  () => playout.finish(performance.now()),
  () => {
    for (let i = drawn.length - 1; i >= 0; i--) {
      const at = end(drawnBlocks.get(drawn[i])!);
      if (at > 0) return at;
    }
    return 0;
  },
);

// What the frame shows: the end of a drawn block's last leaf, a UTF-16 offset (0 for a rule).
const ends = new WeakMap<MarkdownBlock, number>();
function end(block: MarkdownBlock): number {
  const known = ends.get(block);
  if (known !== undefined) return known;
  let at = 0;
  const leaf = (node: MarkdownInline) => {
    if ("source" in node) at = Math.max(at, node.source.end);
    if ("content" in node) node.content.forEach(leaf);
  };
  const walk = (b: MarkdownBlock) => {
    switch (b.kind) {
      case "paragraph": case "heading": b.content.forEach(leaf); break;
      case "quote": b.blocks.forEach(walk); break;
      case "list": for (const item of b.items) item.blocks.forEach(walk); break;
      case "code": case "html": for (const t of b.content) at = Math.max(at, t.source.end); break;
      case "table": b.head.forEach((c) => c.forEach(leaf)); b.rows.forEach((r) => r.forEach((c) => c.forEach(leaf))); break;
      case "rule": break;
    }
  };
  walk(block);
  ends.set(block, at);
  return at;
}
