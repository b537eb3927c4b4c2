// A bundler's URL for an imported .wasm file (esbuild's `file` loader, Vite's `?url`).
declare module "*.wasm" {
  const url: string;
  export default url;
}
