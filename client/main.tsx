/** Placeholder entry replaced by the real client. */
import { render } from "preact";

render(<p>Loading…</p>, document.getElementById("app")!);
