// CSS of the editor's HTML parts (toolbar, palette, handle, menus, errors, text), in
// JupyterLab's theme variables and the look of ipywidgets' controls.
export const CSS = `
.sfc-editor { font: 13px var(--jp-ui-font-family, sans-serif); color: var(--jp-ui-font-color1, #222);
  border: 1px solid var(--jp-border-color1, #ccc); border-radius: 4px; outline: none;
  background: var(--jp-layout-color1, #fff); }
.sfc-editor [hidden] { display: none !important; }
.sfc-toolbar { display: flex; gap: 10px; align-items: center; padding: 5px 8px; flex-wrap: wrap;
  border-bottom: 1px solid var(--jp-border-color2, #e0e0e0); }
.sfc-label { display: flex; gap: 6px; align-items: center; font-weight: 600; }
.sfc-name { width: 9em; height: 26px; box-sizing: border-box; padding: 0 6px; font: 13px var(--jp-code-font-family, monospace);
  border: 1px solid var(--jp-border-color1, #bdbdbd); border-radius: 2px; background: var(--jp-layout-color1, #fff);
  color: inherit; }
.sfc-name:focus { border-color: var(--jp-brand-color1, #1976d2); outline: none; }
.sfc-group-btn { display: flex; gap: 2px; }
.sfc-editor button { display: inline-flex; gap: 5px; align-items: center; height: 26px; padding: 0 10px;
  font: 13px var(--jp-ui-font-family, sans-serif); color: var(--jp-ui-font-color1, #222); cursor: pointer;
  border: 0; border-radius: 2px; background: var(--jp-layout-color2, #eeeeee); }
.sfc-editor button:hover:enabled { box-shadow: 0 2px 2px 0 rgba(0,0,0,.14), 0 3px 1px -2px rgba(0,0,0,.2),
  0 1px 5px 0 rgba(0,0,0,.12); }
.sfc-editor button:active:enabled { background: var(--jp-layout-color3, #bdbdbd); }
.sfc-editor button:disabled { opacity: .45; cursor: default; }
.sfc-editor button.sfc-on { background: var(--jp-brand-color1, #1976d2); color: #fff; }
.sfc-icon { font-size: 15px; line-height: 1; }
.sfc-status { margin-left: auto; display: inline-flex; align-items: center; gap: 6px; padding: 2px 10px;
  border-radius: 12px; font-size: 12px; background: #e8f5e9; color: #2e7d32; }
.sfc-status::before { content: ""; width: 8px; height: 8px; border-radius: 50%; background: currentColor; }
.sfc-status.sfc-bad { background: #ffebee; color: #c62828; }
/* narrow (a small window, a sidebar open): the palette goes above the canvas, which keeps room */
.sfc-body { display: flex; flex-wrap: wrap; position: relative; container-type: inline-size; }
.sfc-palette { flex: none; display: grid; grid-template-columns: repeat(2, max-content); column-gap: 2px;
  align-content: start; padding: 4px 6px 6px; user-select: none; font-size: 12px;
  border-right: 1px solid var(--jp-border-color2, #e0e0e0); background: var(--jp-layout-color1, #fff); }
.sfc-group { grid-column: 1 / -1; font-size: 10px; font-weight: 600; text-transform: uppercase; letter-spacing: .05em;
  margin: 6px 0 1px 2px; color: var(--jp-ui-font-color2, #666); }
.sfc-group:first-child { margin-top: 2px; }
.sfc-item { display: flex; gap: 5px; align-items: center; padding: 0 6px 0 3px; line-height: 20px; cursor: grab;
  border-radius: 3px; touch-action: none; white-space: nowrap; }
.sfc-item:hover { background: var(--jp-layout-color2, #eee); }
.sfc-item i { width: 10px; height: 10px; border-radius: 2px; border: 1px solid rgba(0,0,0,.55); flex: none; }
.sfc-item.sfc-endpoint i { border-radius: 50%; }
.sfc-stage { flex: 1 1 320px; min-width: 0; min-height: 260px; position: relative; background: #fff; }
/* (after .sfc-palette: the narrow rule wins) */
@container (max-width: 540px) {
  .sfc-palette { flex: 1 1 100%; border-right: 0; border-bottom: 1px solid var(--jp-border-color2, #e0e0e0);
    grid-template-columns: repeat(auto-fill, minmax(12em, 1fr)); } }
.sfc-canvas { position: absolute; inset: 0; }
.sfc-hint { position: absolute; left: 8px; bottom: 5px; font-size: 11px; color: #757575; pointer-events: none;
  background: rgba(255,255,255,.85); padding: 0 4px; border-radius: 2px; }
.sfc-zoom-hint { position: absolute; left: 50%; top: 50%; transform: translate(-50%, -50%); z-index: 6;
  pointer-events: none; padding: 6px 14px; border-radius: 4px; background: rgba(0,0,0,.65); color: #fff; font-size: 13px; }
.sfc-lab-group { align-items: center; min-width: 0; }
/* the Lab's status wraps between words: read whole, the advice in it too, at any width */
.sfc-lab { display: block; min-width: 0; max-width: 40em; padding: 0 6px; font-size: 12px; line-height: 1.35;
  white-space: normal; overflow-wrap: break-word; color: var(--jp-ui-font-color2, #555); }
.sfc-lab.sfc-bad { color: #c62828; }
.sfc-handle { position: absolute; z-index: 5; width: 18px; height: 18px; margin: -9px 0 0 -9px; border-radius: 50%;
  background: #1976d2; color: #fff; font: bold 15px/18px sans-serif; text-align: center; cursor: crosshair;
  box-shadow: 0 1px 3px rgba(0,0,0,.35); user-select: none; touch-action: none; }
.sfc-handle:hover { transform: scale(1.2); }
.sfc-connect-mode .sfc-canvas, .sfc-linking .sfc-canvas { cursor: crosshair; }
.sfc-menu { position: absolute; right: 6px; top: 6px; z-index: 10; background: var(--jp-layout-color1, #fff);
  border: 1px solid var(--jp-border-color1, #bbb); border-radius: 4px; padding: 6px; display: flex;
  flex-direction: column; gap: 4px; box-shadow: 0 2px 8px rgba(0,0,0,.2); }
.sfc-row { display: flex; gap: 4px; align-items: center; }
.sfc-row input, .sfc-row select { font: inherit; }
.sfc-row input[name=field] { width: 13em; }
.sfc-row input[name=bound] { width: 4em; }
.sfc-errors { margin: 0; padding: 0 6px 0 24px; color: #c62828; }
.sfc-errors:empty { display: none; }
.sfc-errors li { cursor: pointer; padding: 1px 0; }
.sfc-errors li span { color: var(--jp-ui-font-color2, #555); }
.sfc-text { display: block; width: 100%; box-sizing: border-box; border: 0; resize: vertical;
  border-top: 1px solid var(--jp-border-color2, #e0e0e0); font: 12px var(--jp-code-font-family, monospace);
  background: var(--jp-layout-color1, #fff); color: inherit; padding: 4px 8px; }
.sfc-ghost { position: fixed; z-index: 10000; pointer-events: none; padding: 2px 8px; border-radius: 4px;
  background: #1976d2; color: #fff; font: 12px sans-serif; opacity: .85; }
`;
