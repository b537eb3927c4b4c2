// Stands in for mermaid when the package's checks run the README's diagrams example (they have
// no mermaid): `render` answers an SVG naming the source, and fails on a source that is not a
// graph, as mermaid does on a parse error.
export default {
  initialize(_config: object) {},
  async render(id: string, source: string) {
    if (!source.startsWith("graph")) throw new Error("Parse error on line 1");
    return { svg: `<svg id="${id}" data-source="${encodeURIComponent(source)}"></svg>` };
  },
};
