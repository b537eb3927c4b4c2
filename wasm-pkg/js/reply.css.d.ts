// portal-wasm/reply.css is a style sheet: `import "portal-wasm/reply.css"` has no bindings. This
// declaration lets TypeScript check that import (noUncheckedSideEffectImports).
export {};
