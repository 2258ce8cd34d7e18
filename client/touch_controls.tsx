/**
 * Two floating thumbsticks for touch screens, off the arena: in the side columns
 * (wide) or under the arena (tall). A stick appears where the thumb lands (left
 * moves, right aims and fires) and writes its deflection into the InputController's
 * touch state; the runtime samples it at the tick rate like any other input. The
 * escape and focus buttons live in the HUD.
 */
import { useRef, useState } from "preact/hooks";
import type { TouchState } from "./input.ts";
import type { Layout } from "./layout.ts";

/** Stick travel in CSS px. */
const STICK_RADIUS_PX = 56;
/** Right-stick deflection below which the ship neither turns nor fires. */
const AIM_DEADZONE = 0.3;

/** Height of the HUD row (HP, buttons) kept clear above the tall layout's stick zones. */
const TALL_ROW_PX = 64;

/** The touch layer; rendered only once a touch has been seen. */
export function TouchControls(
  { touch, escape, layout }: { touch: TouchState; escape: boolean; layout: Layout },
) {
  // The button can vanish mid-hold (the dungeon ends): never leave escape stuck on.
  if (!escape) touch.escape = false;
  const a = layout.arena;
  // Wide: the HUD shows the hints in its columns' free space, clear of its panels.
  const hint = layout.mode === "tall";
  const zone = (side: "left" | "right") =>
    layout.mode === "wide"
      ? { top: "0px", bottom: "0px", width: `${layout.columnPx}px`, [side]: "0px" }
      : {
        top: `${Math.round(a.y + a.h) + TALL_ROW_PX}px`,
        bottom: "0px",
        width: "50%",
        [side]: "0px",
      };
  return (
    <div class="touch">
      <Stick
        zone={zone("left")}
        side="left"
        label={hint && "MOVE"}
        onMove={(x, y) => {
          touch.moveX = x;
          touch.moveY = y;
        }}
      />
      <Stick
        zone={zone("right")}
        side="right"
        label={hint && "AIM + FIRE"}
        onMove={(x, y) => {
          const held = Math.hypot(x, y) > AIM_DEADZONE;
          touch.aiming = held;
          if (held) {
            touch.aimX = x;
            touch.aimY = y;
          }
        }}
      />
    </div>
  );
}

interface StickState {
  readonly ox: number;
  readonly oy: number;
  readonly kx: number;
  readonly ky: number;
}

function Stick(
  { side, label, onMove, zone }: {
    zone: Record<string, string>;
    side: "left" | "right";
    label: string | false;
    onMove: (x: number, y: number) => void;
  },
) {
  const [s, setS] = useState<StickState | null>(null);
  const pointer = useRef<number | null>(null);
  const origin = useRef({ x: 0, y: 0, left: 0, top: 0 });

  const end = () => {
    pointer.current = null;
    setS(null);
    onMove(0, 0);
  };

  return (
    <div
      class={`stick-zone ${side}`}
      data-testid={`stick-${side}`}
      style={zone}
      onPointerDown={(e) => {
        if (pointer.current !== null) return;
        pointer.current = e.pointerId;
        (e.currentTarget as HTMLElement).setPointerCapture(e.pointerId);
        const rect = (e.currentTarget as HTMLElement).getBoundingClientRect();
        origin.current = { x: e.clientX, y: e.clientY, left: rect.left, top: rect.top };
        setS({ ox: e.clientX - rect.left, oy: e.clientY - rect.top, kx: 0, ky: 0 });
      }}
      onPointerMove={(e) => {
        if (e.pointerId !== pointer.current) return;
        const o = origin.current;
        let dx = e.clientX - o.x;
        let dy = e.clientY - o.y;
        const d = Math.hypot(dx, dy);
        if (d > STICK_RADIUS_PX) {
          dx *= STICK_RADIUS_PX / d;
          dy *= STICK_RADIUS_PX / d;
        }
        setS({ ox: o.x - o.left, oy: o.y - o.top, kx: dx, ky: dy });
        onMove(dx / STICK_RADIUS_PX, dy / STICK_RADIUS_PX);
      }}
      onPointerUp={(e) => e.pointerId === pointer.current && end()}
      onPointerCancel={(e) => e.pointerId === pointer.current && end()}
    >
      {s
        ? (
          <div class="stick-base" style={{ left: `${s.ox}px`, top: `${s.oy}px` }}>
            <div class="stick-knob" style={{ transform: `translate(${s.kx}px, ${s.ky}px)` }} />
          </div>
        )
        : label && <div class="stick-hint">{label}</div>}
    </div>
  );
}
