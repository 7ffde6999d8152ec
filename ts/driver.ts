/** `node ts/dist/driver.js`: the threads-ts driver (see src/driver.ts). */
import { serve } from "./src/protocol/driver.js";

serve();
