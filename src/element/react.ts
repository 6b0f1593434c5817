/**
 * `nestjs-phone-verification/element/react`: the JSX type of `<phone-verification>` for React 19,
 * which sets an element's properties (`headers`, `clientOptions`, `texts`) as properties and listens
 * to its events through `on<event>` props. Import it once for its types:
 * `import type {} from 'nestjs-phone-verification/element/react'`.
 */
import type { DetailedHTMLProps, HTMLAttributes } from 'react';
import type { Texts } from './messages.js';
import type {
  HostHeaders,
  PhoneVerificationElement,
  PhoneVerificationEventDetail,
} from './phone-verification.js';
import type { VerificationClientOptions } from '../client/index.js';

/** An `on<event>` prop's listener. */
export type PhoneVerificationListener = (event: CustomEvent<PhoneVerificationEventDetail>) => void;

export interface PhoneVerificationProps extends DetailedHTMLProps<
  HTMLAttributes<PhoneVerificationElement>,
  PhoneVerificationElement
> {
  'base-url'?: string;
  /** `auto`, or the methods to offer, space-separated. */
  methods?: string;
  credentials?: 'same-origin' | 'include' | 'header';
  country?: string;
  headers?: HostHeaders;
  clientOptions?: VerificationClientOptions;
  texts?: Texts;
  onverified?: PhoneVerificationListener;
  onfailed?: PhoneVerificationListener;
  onexpired?: PhoneVerificationListener;
  oncanceled?: PhoneVerificationListener;
  onerror?: PhoneVerificationListener;
}

declare module 'react' {
  namespace JSX {
    interface IntrinsicElements {
      'phone-verification': PhoneVerificationProps;
    }
  }
}

/* The element's types the props use (its values come from `nestjs-phone-verification/element`). */
export type * from './index.js';
