/**
 * Before each test file: a root-handle query inside withTx fails loudly in every hub a test runs in its worker
 * (hub/src/store/database.ts; off in service, where its promise hooks would cost every request).
 */
import { guardTransactions } from '../../hub/src/store/database';

guardTransactions();
