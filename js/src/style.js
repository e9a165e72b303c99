// CSS of the editor's HTML parts (toolbar, palette, menus, errors, text).
export const CSS = `
.sfc-editor { font: 13px var(--jp-ui-font-family, sans-serif); color: var(--jp-ui-font-color1, #222);
  border: 1px solid var(--jp-border-color1, #ccc); border-radius: 4px; outline: none; }
.sfc-toolbar { display: flex; gap: 6px; align-items: center; padding: 4px 6px; flex-wrap: wrap;
  border-bottom: 1px solid var(--jp-border-color2, #ddd); background: var(--jp-layout-color2, #f5f5f5); }
.sfc-toolbar button, .sfc-menu button { font: inherit; padding: 1px 8px; cursor: pointer; }
.sfc-toolbar button.sfc-on { background: #1976d2; color: #fff; }
.sfc-name { width: 9em; font: inherit; }
.sfc-status { margin-left: auto; color: #2e7d32; }
.sfc-status.sfc-bad { color: #c62828; }
.sfc-body { display: flex; position: relative; }
.sfc-palette { width: 150px; overflow-y: auto; padding: 4px; box-sizing: border-box;
  border-right: 1px solid var(--jp-border-color2, #ddd); user-select: none; }
.sfc-item { display: flex; gap: 6px; align-items: center; padding: 2px 4px; cursor: grab; border-radius: 3px;
  touch-action: none; }
.sfc-group { font-size: 11px; text-transform: uppercase; letter-spacing: .04em; margin: 6px 0 2px;
  color: var(--jp-ui-font-color2, #666); }
.sfc-group:first-child { margin-top: 0; }
.sfc-item:hover { background: var(--jp-layout-color3, #e8e8e8); }
.sfc-item i { width: 12px; height: 12px; border-radius: 3px; border: 1px solid #333; flex: none; }
.sfc-item.sfc-endpoint i { border-radius: 50%; }
.sfc-canvas { flex: 1; min-width: 0; background: #fff; }
.sfc-menu { position: absolute; right: 6px; top: 6px; z-index: 10; background: var(--jp-layout-color1, #fff);
  border: 1px solid var(--jp-border-color1, #bbb); border-radius: 4px; padding: 6px; display: flex;
  flex-direction: column; gap: 4px; box-shadow: 0 2px 8px rgba(0,0,0,.2); }
.sfc-menu[hidden], .sfc-row[hidden] { display: none; }
.sfc-row { display: flex; gap: 4px; align-items: center; }
.sfc-row input, .sfc-row select { font: inherit; }
.sfc-row input[name=field] { width: 13em; }
.sfc-row input[name=bound] { width: 4em; }
.sfc-errors { margin: 0; padding: 0 6px 0 24px; color: #c62828; }
.sfc-errors li { cursor: pointer; padding: 1px 0; }
.sfc-errors li span { color: var(--jp-ui-font-color2, #555); }
.sfc-text { display: block; width: 100%; box-sizing: border-box; border: 0; resize: vertical;
  border-top: 1px solid var(--jp-border-color2, #ddd); font: 12px var(--jp-code-font-family, monospace);
  background: var(--jp-layout-color1, #fff); color: inherit; padding: 4px 6px; }
.sfc-ghost { position: fixed; z-index: 10000; pointer-events: none; padding: 2px 8px; border-radius: 4px;
  background: #1976d2; color: #fff; font: 12px sans-serif; opacity: .85; }
`;
