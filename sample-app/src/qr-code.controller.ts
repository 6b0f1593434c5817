import { Controller, Get, Header, Query, UseFilters } from '@nestjs/common';
import QRCode from 'qrcode';
import { DemoProblem, DemoProblemFilter } from './demo-problem.js';

const MAX_LINK_CHARS = 512;

/**
 * Renders a link as an SVG QR code on the server, so the page works offline (no CDN, no script).
 * Used for msgr2_bot's `deep_link`: the user scans it with the phone that has the messenger.
 */
@Controller('demo')
@UseFilters(DemoProblemFilter)
export class QrCodeController {
  @Get('qr.svg')
  @Header('Content-Type', 'image/svg+xml')
  @Header('Cache-Control', 'public, max-age=600')
  async qrCode(@Query('data') data: unknown): Promise<string> {
    if (typeof data !== 'string' || data.length > MAX_LINK_CHARS || !/^https?:\/\/\S+$/.test(data))
      throw new DemoProblem(
        400,
        'validation_error',
        `data must be an http(s) link of at most ${MAX_LINK_CHARS} characters`,
      );
    return QRCode.toString(data, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
  }
}
