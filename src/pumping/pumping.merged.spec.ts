/**
 * The unit specs of src/pumping, in one file so that jest starts one file for them (test/merged-parts.mjs). One
 * spec alone: `npx jest --testMatch '<rootDir>/src/pumping/<file>.spec.ts'`.
 */
import './giver-shares.spec.js';
import './past-network-votes.spec.js';
import './pumping-counts.spec.js';
import './pumping-defence.answers.spec.js';
import './pumping-defence.givers.spec.js';
import './pumping-defence.late-proof.spec.js';
import './pumping-defence.readings.spec.js';
import './pumping-defence.spec.js';
import './pumping-report.spec.js';
import './pumping-rules.day.spec.js';
import './pumping-rules.mutation.spec.js';
import './pumping-rules.prior.spec.js';
import './pumping-rules.spec.js';
import './range-bursts.spec.js';
import './range-holds.spec.js';
import './range-holds.start-hold.spec.js';
import './range-holds.steered.spec.js';
import './range-holds.week.spec.js';
import './range-stats.concurrent.spec.js';
import './range-stats.count-trips.spec.js';
import './range-stats.given-back.spec.js';
import './range-stats.spec.js';
import './range-stats.week.spec.js';
import './remembered-session.spec.js';
