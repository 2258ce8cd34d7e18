/**
 * Two floating thumbsticks and an escape button for touch screens. A stick
 * appears where the thumb lands (left half moves, right half aims and fires) and
 * writes its deflection into the InputController's touch state; the runtime
 * samples it at the tick rate like any other input.
 */
import { useRef, useState } from "preact/hooks";
import type { TouchState } from "./input.ts";

/** Stick travel in CSS px. */
const STICK_RADIUS_PX = 56;
/** Right-stick deflection below which the ship neither turns nor fires. */
const AIM_DEADZONE = 0.3;

/** The touch layer; rendered only once a touch has been seen. */
export function TouchControls({ touch, escape }: { touch: TouchState; escape: boolean }) {
  // The button can vanish mid-hold (the dungeon ends): never leave escape stuck on.
  if (!escape) touch.escape = false;
  return (
    <div class="touch">
      <Stick
        side="left"
        label="MOVE"
        onMove={(x, y) => {
          touch.moveX = x;
          touch.moveY = y;
        }}
      />
      <Stick
        side="right"
        label="AIM + FIRE"
        onMove={(x, y) => {
          const held = Math.hypot(x, y) > AIM_DEADZONE;
          touch.aiming = held;
          if (held) {
            touch.aimX = x;
            touch.aimY = y;
          }
        }}
      />
      {escape && (
        <button
          type="button"
          class="touch-escape"
          onPointerDown={(e) => {
            e.preventDefault();
            touch.escape = true;
          }}
          onPointerUp={() => touch.escape = false}
          onPointerCancel={() => touch.escape = false}
          onPointerLeave={() => touch.escape = false}
        >
          hold to<br />escape
        </button>
      )}
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
  { side, label, onMove }: {
    side: "left" | "right";
    label: string;
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
        : <div class="stick-hint">{label}</div>}
    </div>
  );
}
