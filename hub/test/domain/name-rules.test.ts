import { ApiFailure } from '@devicelab/shared';
import { areConfusable, readableName, skeleton } from '../../src/domain/name-rules';

describe('name rules', () => {
  it('maps Latin, Cyrillic and Greek look-alikes, digits and fullwidth forms to one skeleton', () => {
    expect(skeleton('Аdministrator')).toBe(skeleton('Administrator')); // Cyrillic А
    expect(skeleton('ΡΑΥΡΑL')).toBe(skeleton('PAYPAL')); // Greek capitals
    expect(skeleton('ｐａｙｐａｌ')).toBe(skeleton('paypal')); // fullwidth
    expect(skeleton('modem')).toBe(skeleton('rnodern'));
    expect(skeleton('adm1n')).toBe(skeleton('admln'));
  });

  it('compares as written, lower-cased and upper-cased, without merging letters that differ', () => {
    expect(areConfusable('Вob', 'bob')).toBe(true); // Cyrillic В looks like B, its lower case does not look like b
    expect(areConfusable('Іvan', 'ivan')).toBe(true); // Cyrillic І
    expect(areConfusable('Ivan', 'lvan')).toBe(true); // capital I and small L
    expect(areConfusable('Ivan', 'Lvan')).toBe(false);
    expect(areConfusable('ivan', 'lvan')).toBe(false);
    expect(areConfusable('rené', 'rene')).toBe(false);
    expect(areConfusable('Testers', 'Tester')).toBe(false);
  });

  it('refuses control, format and separator characters and normalises to NFC', () => {
    for (const bad of ['a\u0000b', 'a\u0007b', 'a\u200bb', 'a\u202eb', 'a\u2028b', 'a\ud800b', 'a\ue000b']) {
      expect(() => readableName(bad, 'A name')).toThrow(new ApiFailure('A name must not contain control, format or separator characters.'));
    }
    expect(readableName('re\u0301ne', 'A name')).toBe('r\u00e9ne');
  });
});
