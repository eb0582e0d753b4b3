/**
 * Child process of the crash-safety test: follows an embedded log into a projection and
 * prints the applied cursor after every committed batch, until the parent kills it.
 */
import { createEmbeddedLog } from '../../log/embedded/index.ts';
import { createProjection } from '../projection.ts';
import { formatVector } from '../positions.ts';

const [logDir, projectionDir] = process.argv.slice(2);
if (!logDir || !projectionDir) throw new Error('usage: crash-child LOG_DIR PROJECTION_DIR');
const log = await createEmbeddedLog({ dir: logDir, cluster: 'crash' });
const projection = createProjection({ dir: projectionDir, log });
projection.cursor$.subscribe((cursor) => process.stdout.write(`applied ${formatVector(cursor)}\n`));
