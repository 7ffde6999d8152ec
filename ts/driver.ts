#!/usr/bin/env node
/** The threads-ts driver: `node ts/dist/driver.js` in a checkout, `threads-ts` from the npm package (see src/protocol/driver.ts). */
import { serve } from "./src/protocol/driver.js";

serve();
