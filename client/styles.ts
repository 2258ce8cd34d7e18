/**
 * The client's stylesheet, injected once at start-up: the page ships one bundle
 * and no separate CSS request. HUD parts never take pointer events, so the mouse
 * always reaches the canvas.
 */

/** CSS for screens, HUD and touch controls. */
export const CSS = `
canvas.world{position:fixed;inset:0;width:100%;height:100%;display:block;cursor:crosshair}
.hud{position:fixed;inset:0;pointer-events:none;font-variant-numeric:tabular-nums}
.hud .col{position:absolute;top:10px;bottom:10px;width:calc(var(--col) - 20px);display:flex;flex-direction:column;gap:8px;overflow:hidden}
.hud .col.left{left:10px}.hud .col.right{right:10px}
.hud .grow{flex:1 1 0;min-height:0}
.hud .band{position:absolute;left:8px;right:8px;display:flex;flex-direction:column;gap:6px;overflow:hidden}
.hud .band.top{top:6px;height:calc(var(--top) - 12px)}
.hud .band.bottom{top:calc(var(--below) + 8px);bottom:6px}
.hud .row{display:flex;gap:8px;align-items:flex-start;flex-wrap:wrap}
.hud.tall .band.top .row>*{flex:1 1 0;min-width:0}
.hud.tall .band.bottom .row{justify-content:space-between}
.panel{background:rgba(9,11,24,.78);border:1px solid rgba(150,160,255,.16);border-radius:10px;
padding:8px 12px;box-shadow:0 4px 18px rgba(0,0,0,.35);box-sizing:border-box}
.hud.tall .panel{padding:5px 9px;border-radius:8px}
.panel-title{font-size:11px;letter-spacing:.12em;text-transform:uppercase;color:#8e93c8;margin-bottom:4px}
.bar{position:relative;height:10px;border-radius:5px;background:rgba(255,255,255,.08);overflow:hidden}
.bar.thin{height:5px;margin-top:5px}
.fill{height:100%;border-radius:inherit;transition:width 80ms linear}
.fill.foe{background:linear-gradient(90deg,#ff6a4d,#ffb347)}
.fill.esc{background:linear-gradient(90deg,#ffe066,#fff6c2)}
.stage .world-name{font-weight:700;letter-spacing:.04em;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.hud.wide .stage .world-name{white-space:normal;overflow-wrap:anywhere}
.stage .stage-label{color:#b9bde6;font-size:13px}
.hud.tall .stage .stage-label{font-size:12px;line-height:1.25}
.wave-text{font-size:12px;color:#ffcf9e;margin-top:4px}
.hud.tall .wave-text{margin-top:2px;font-size:11px}
.boss{text-shadow:0 1px 3px #000}
.boss-name{font-weight:700;letter-spacing:.03em;font-size:13px;line-height:1.25;overflow-wrap:anywhere}
.hud.tall .boss-name{white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.boss-head{display:flex;flex-wrap:wrap;align-items:baseline;justify-content:space-between;gap:0 8px;font-size:12px;margin-bottom:3px}
.hud.tall .boss{display:grid;grid-template-columns:auto 1fr auto;align-items:center;gap:2px 10px}
.hud.tall .boss .boss-head{display:contents}
.hud.tall .boss .boss-bar{grid-column:1 / -1}
.boss-phase{font-weight:600;white-space:nowrap}
.boss-hp{font-size:11px;color:#b4b9e6;white-space:nowrap}
.boss-bar{height:8px;box-shadow:0 0 0 1px rgba(0,0,0,.6)}
.boss-bar .marker{position:absolute;top:0;bottom:0;width:2px;margin-left:-1px;background:rgba(255,255,255,.8)}
.boss.folding .boss-bar{animation:pulse .25s ease-in-out infinite alternate}
@keyframes pulse{from{filter:brightness(1)}to{filter:brightness(1.8)}}
.toasts{display:flex;flex-direction:column;align-items:flex-start;gap:6px}
.hud.tall .toasts{align-items:center}
.toast{background:rgba(12,14,30,.88);border:1px solid rgba(150,160,255,.25);border-radius:8px;
padding:5px 12px;font-size:13px;animation:toast-in .2s ease-out;max-width:100%;box-sizing:border-box}
.toast.good{border-color:#6dff9e;color:#d4ffe3}
.toast.warn{border-color:#ffb347;color:#ffe6c7}
@keyframes toast-in{from{opacity:0;transform:translateY(-6px)}to{opacity:1;transform:none}}
.roster ul{list-style:none;margin:0;padding:0;font-size:14px}
.roster li{display:flex;justify-content:space-between;gap:10px;padding:1px 0;white-space:nowrap}
.roster .pname{overflow:hidden;text-overflow:ellipsis}
.roster .you{margin-left:.3em}
.hud.wide.touch .roster ul{font-size:13px}
.hud.wide.touch .roster .you{display:none}
.hud.tall .roster .panel-title{display:none}
.hud.tall .roster ul{display:grid;grid-template-columns:1fr;font-size:12px;line-height:1.3}
.roster li.self .pname{color:#5ff4ff;font-weight:600}
.roster li.dead,.roster li.escaped,.roster li.away{opacity:.5}
.roster .pstate{color:#9aa0d0;font-size:12px}
.hp{display:flex;align-items:center;gap:6px;flex-wrap:wrap;align-self:flex-start}
.hp-label{font-size:11px;letter-spacing:.12em;color:#8e93c8;margin-right:2px}
.pip{width:14px;height:14px;transform:rotate(45deg) scale(.8);border:2px solid #5ff4ff;border-radius:3px;opacity:.35;box-sizing:border-box}
.pip.on{background:#5ff4ff;opacity:1;box-shadow:0 0 10px rgba(95,244,255,.6)}
.graze{font-size:12px;color:#b4ecff;margin-left:4px;white-space:nowrap;animation:graze-in .25s ease-out}
@keyframes graze-in{from{color:#ffffff;text-shadow:0 0 8px #9fe8ff}to{color:#b4ecff;text-shadow:none}}
.escape{text-align:center}
.escape-text{font-size:13px;color:#fff1b0;margin-bottom:6px;text-wrap:balance}
.escape.cancelled{color:#ffb0a0;font-size:13px}
.escape-hint{font-size:12px;color:rgba(200,205,240,.6)}
.hud.tall .escape-hint{flex:1 1 0;min-width:0;text-align:center}
.help{font-size:12px}
.help dl{display:grid;grid-template-columns:auto 1fr;gap:2px 10px;margin:0}
.help dt{color:#5ff4ff;font-weight:600}
.help dd{margin:0;color:#d8daf5}
.help-foot{margin-top:6px;color:#c9b6ff}
.hud.wide.touch .help dl{display:block}
.hud.wide.touch .help dt,.hud.wide.touch .help dd{display:inline}
.hud.wide.touch .help dd::after{content:"";display:block;margin-bottom:2px}
.hud.wide.touch .help dd::before{content:" "}
.buttons{display:flex;flex-wrap:wrap;gap:6px;justify-content:flex-end;align-items:center}
.col.left .buttons{justify-content:flex-start}
.hud .col>*{flex-shrink:0}
.hud-btn{pointer-events:auto;font:600 11px/1.1 system-ui,sans-serif;padding:6px 9px;border-radius:8px;cursor:pointer;
border:1px solid rgba(150,160,255,.3);background:rgba(14,16,34,.88);color:#c9cdf5;touch-action:none}
.hud-btn[aria-pressed=true]{color:#8e93c8}
.hud-btn.big{min-width:64px;min-height:52px;font-size:12px;border-radius:12px}
.hud-btn.big.on{background:#5ff4ff;color:#061018;border-color:#5ff4ff}
.hud-btn.escape-btn{border:2px solid rgba(255,224,102,.6);background:rgba(40,34,10,.75);color:#ffe066;max-width:84px}
.banner{position:absolute;left:var(--ax);width:var(--aw);top:38%;text-align:center;padding:22px 10px;box-sizing:border-box;
background:linear-gradient(90deg,transparent,rgba(8,8,20,.88) 25%,rgba(8,8,20,.88) 75%,transparent);
animation:toast-in .3s ease-out}
.banner-title{font-size:clamp(20px,4.5vw,34px);font-weight:800;letter-spacing:.02em}
.banner-sub{margin-top:6px;color:#b9bde6}
.banner.death .banner-title{color:#ff6b6b}
.banner.cleared .banner-title{color:#7dffb0;text-shadow:0 0 24px rgba(125,255,176,.5)}
.hurt{position:absolute;inset:0;box-shadow:inset 0 0 120px rgba(255,40,40,.75);animation:hurt .45s ease-out forwards}
@keyframes hurt{from{opacity:1}to{opacity:0}}
@media (prefers-reduced-motion:reduce){.hurt,.toast,.banner,.graze{animation:none}}
.netgraph{font:12px/1.35 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;color:#b8ffcf}
.ng-row{display:flex;justify-content:space-between;gap:16px}
.overlay{position:fixed;inset:0;display:flex;align-items:center;justify-content:center;padding:16px}
.overlay.connect{background:radial-gradient(ellipse at 50% 35%,#1d1640 0%,#07080f 70%)}
.overlay.dim{background:rgba(4,5,12,.72)}
.overlay.reconnecting{background:rgba(4,5,12,.45);pointer-events:none}
.overlay.reconnecting h2::after{content:"";display:inline-block;width:.7em;height:.7em;margin-left:.5em;
border:2px solid currentColor;border-right-color:transparent;border-radius:50%;vertical-align:-.05em;
animation:spin .8s linear infinite}
@keyframes spin{to{transform:rotate(360deg)}}
.card{background:rgba(14,16,34,.94);border:1px solid rgba(150,160,255,.22);border-radius:16px;padding:28px 30px;
width:min(380px,100%);box-sizing:border-box;display:flex;flex-direction:column;gap:10px;box-shadow:0 20px 60px rgba(0,0,0,.5)}
.card h1{margin:0;font-size:30px;line-height:1.1;background:linear-gradient(90deg,#5ff4ff,#c9a2ff);
-webkit-background-clip:text;background-clip:text;color:transparent}
.card h2{margin:0;font-size:24px}
.title-kicker{font-size:11px;letter-spacing:.2em;text-transform:uppercase;color:#8e93c8}
.lede{margin:0 0 6px;color:#b9bde6}
.card label{font-size:12px;color:#8e93c8;letter-spacing:.08em;text-transform:uppercase}
.card input{font:inherit;font-size:17px;padding:10px 12px;border-radius:10px;border:1px solid #343a6e;
background:#0a0c1c;color:#f1f0ff;outline:none;user-select:text}
.card input:focus{border-color:#5ff4ff;box-shadow:0 0 0 3px rgba(95,244,255,.18)}
button.primary{font:inherit;font-size:17px;font-weight:700;padding:11px;border:0;border-radius:10px;cursor:pointer;
color:#061018;background:linear-gradient(90deg,#5ff4ff,#9d8bff)}
button.primary:disabled{opacity:.6;cursor:wait}
.error{margin:0;color:#ff8f8f;background:rgba(255,80,80,.1);border:1px solid rgba(255,80,80,.3);border-radius:8px;padding:8px 10px;font-size:14px}
.hint{margin:4px 0 0;font-size:12px;color:#7c81b3}
.reason{margin:0;color:#c9cbe8}
.touch{position:fixed;inset:0;pointer-events:none}
.stick-zone{position:absolute;pointer-events:auto;touch-action:none}
.stick-hint{position:absolute;top:50%;left:50%;transform:translate(-50%,-50%);font-size:11px;letter-spacing:.12em;
color:rgba(220,225,255,.3);border:2px dashed rgba(220,225,255,.15);border-radius:50%;width:84px;height:84px;
display:flex;align-items:center;justify-content:center;text-align:center;box-sizing:border-box}
/* Under the arena (tall), near the bottom of the stick's zone: where thumbs rest, clear of the HUD's panels. */
.stick-zone>.stick-hint{top:auto;bottom:20px;transform:translateX(-50%)}
.stick-slot{position:relative;container-type:size}
.stick-slot .stick-hint{width:min(84px,calc(100cqh - 8px));height:min(84px,calc(100cqh - 8px))}
@container (max-height:56px){.stick-slot .stick-hint{display:none}}
.stick-base{position:absolute;width:112px;height:112px;margin:-56px 0 0 -56px;border-radius:50%;
border:2px solid rgba(200,210,255,.35);background:rgba(20,24,50,.35)}
.stick-knob{position:absolute;left:32px;top:32px;width:48px;height:48px;border-radius:50%;
background:rgba(95,244,255,.55);box-shadow:0 0 14px rgba(95,244,255,.5)}
.results-overlay{background:rgba(4,5,12,.6);z-index:5}
.card.results{width:min(460px,100%);max-height:100%;overflow:auto;gap:8px}
.results.cleared h2{color:#7dffb0}
.results.wiped h2{color:#ff8f8f}
.results table{border-collapse:collapse;width:100%;font-size:14px}
.results th{font-size:11px;letter-spacing:.1em;text-transform:uppercase;color:#8e93c8;text-align:right;padding:4px 6px;font-weight:600}
.results td{text-align:right;padding:5px 6px;border-top:1px solid rgba(150,160,255,.12)}
.results th:first-child,.results td:first-child{text-align:left}
.results tr.self td:first-child{color:#5ff4ff;font-weight:600}
.results .status{margin-left:8px;font-size:11px;color:#8e93c8}
.choices{display:flex;flex-direction:column;gap:8px;margin-top:6px}
@media (max-width:420px){.card{padding:20px 16px}.results th,.results td{padding:4px 3px}}
@media (max-height:420px){.card{padding:14px 24px}.card.results{gap:4px}.card.results h2{font-size:20px}
.card.results .lede{margin:0}.choices{flex-direction:row}.choices>button{flex:1 1 0}}
button.secondary{font:inherit;font-size:15px;padding:10px;border-radius:10px;cursor:pointer;
color:#c9cdf5;background:transparent;border:1px solid rgba(150,160,255,.35)}
`;
