// Files as people send them: dropped on the page or pasted into the message box they go the
// Attach button's way; a picture shows a thumbnail in its chip and in the sent message, whose
// link serves it; several refused files say what was wrong with each; a read file reads "Ready".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { axeScan, openPortal, shots } from './portal.mjs';

/** Makes a PNG picture named `name` in the page and keeps it in a DataTransfer, `window.files`. */
async function pictureInPage(page, name) {
  await page.evaluate(async (name) => {
    const canvas = document.createElement('canvas');
    canvas.width = 60;
    canvas.height = 40;
    const ink = canvas.getContext('2d');
    ink.fillStyle = '#2b8a3e';
    ink.fillRect(0, 0, 60, 40);
    ink.fillStyle = '#f08c00';
    ink.fillRect(20, 10, 20, 20);
    const blob = await new Promise((done) => canvas.toBlob(done, 'image/png'));
    window.files = new DataTransfer();
    window.files.items.add(new File([blob], name, { type: 'image/png' }));
  }, name);
}

/** Fires a drag event carrying `window.files` at the conversation. */
function drag(page, type) {
  return page.evaluate((type) => {
    const event = new DragEvent(type, { dataTransfer: window.files, bubbles: true, cancelable: true });
    document.querySelector('.conversation').dispatchEvent(event);
    return event.defaultPrevented;
  }, type);
}

/** Whether the image drew: its file came and the page's policy let it in. */
function drawn(image) {
  return image.evaluate(async (img) => {
    await img.decode().catch(() => {});
    return img.complete && img.naturalWidth > 0;
  });
}

async function noSeriousViolations(page, state) {
  for (const theme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: theme });
    assert.deepEqual(await axeScan(page), [], `${state}, ${theme} theme`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

test('a dropped picture and a pasted one are attached with thumbnails, sent, and open', async () => {
  const { page, close } = await openPortal();
  try {
    // Dragged over the page, files show where they go; leaving takes the target away.
    await pictureInPage(page, 'heron.png');
    assert.equal(await drag(page, 'dragenter'), true, 'the page takes the files');
    await drag(page, 'dragover');
    const target = page.getByTestId('drop-target');
    await target.waitFor();
    await page.screenshot({ path: join(shots, 'files-drop-target.png') });
    await noSeriousViolations(page, 'the drop target');
    await drag(page, 'dragleave');
    await target.waitFor({ state: 'detached' });

    // Dropped, the picture gets a chip with its thumbnail, drawn from the person's own file.
    await drag(page, 'dragenter');
    assert.equal(await drag(page, 'drop'), true, 'the browser does not open the file');
    await target.waitFor({ state: 'detached' });
    const chips = page.getByTestId('attachment-chip');
    const dropped = chips.filter({ hasText: 'heron.png' });
    await dropped.and(page.locator('[data-uploaded="true"]')).waitFor();
    const thumbnail = dropped.locator('img.thumbnail');
    assert.match(await thumbnail.getAttribute('src'), /^blob:/);
    assert.equal(await drawn(thumbnail), true, 'the thumbnail is drawn');
    assert.match(await dropped.innerText(), /heron\.png\s*Ready/);

    // Pasted into the message box, a picture is attached the same way; pasted text is left to
    // the message box.
    const message = page.getByLabel('Message');
    await message.focus();
    await pictureInPage(page, 'image.png');
    const paste = (withFiles) => page.evaluate((withFiles) => {
      let data = window.files;
      if (!withFiles) {
        data = new DataTransfer();
        data.setData('text/plain', 'some words');
      }
      const event = new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true });
      document.querySelector('textarea').dispatchEvent(event);
      return event.defaultPrevented;
    }, withFiles);
    assert.equal(await paste(false), false, 'pasted text goes into the message box as before');
    assert.equal(await paste(true), true);
    const pasted = chips.filter({ hasText: 'image.png' });
    await pasted.and(page.locator('[data-uploaded="true"]')).waitFor();
    assert.equal(await drawn(pasted.locator('img.thumbnail')), true, 'the pasted picture is drawn');
    await page.screenshot({ path: join(shots, 'files-thumbnails.png') });
    await noSeriousViolations(page, 'chips with thumbnails');

    // Sent, each picture shows a thumbnail served by the portal, and its link opens it.
    await message.fill('What birds are these?');
    await message.press('Enter');
    await page.locator('[data-turn="1"][data-turn-status="completed"][data-settled="true"]').waitFor({ timeout: 60000 });
    assert.equal(await chips.count(), 0);
    const sent = page.locator('[data-turn="1"]').getByTestId('attachment-name');
    assert.deepEqual(await sent.allInnerTexts(), ['heron.png', 'image.png']);
    const sentThumbnail = sent.first().locator('img.thumbnail');
    assert.match(await sentThumbnail.getAttribute('src'), /^\/api\/attachments\/att_[0-9a-f]{32}\/content$/);
    assert.equal(await drawn(sentThumbnail), true, 'the sent thumbnail is drawn');
    const link = sent.first().getByRole('link', { name: 'heron.png' });
    const served = await page.evaluate(async (address) => {
      const response = await fetch(address);
      const bytes = new Uint8Array(await response.arrayBuffer());
      return {
        status: response.status,
        type: response.headers.get('content-type'),
        disposition: response.headers.get('content-disposition'),
        nosniff: response.headers.get('x-content-type-options'),
        png: bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47,
      };
    }, await link.getAttribute('href'));
    assert.deepEqual(served, {
      status: 200,
      type: 'image/png',
      disposition: "inline; filename*=UTF-8''heron.png",
      nosniff: 'nosniff',
      png: true,
    });
    await page.locator('[data-turn="1"] .message.user').screenshot({ path: join(shots, 'files-sent.png') });
    await noSeriousViolations(page, 'a sent message with pictures');

    // Taken back to edit, the pictures' chips show thumbnails from the portal.
    await page.locator('[data-turn="1"]').getByTestId('edit').click();
    const edited = chips.filter({ hasText: 'heron.png' }).locator('img.thumbnail');
    assert.match(await edited.getAttribute('src'), /^\/api\/attachments\/att_[0-9a-f]{32}\/content$/);
    assert.equal(await drawn(edited), true, "the edited chip's thumbnail is drawn");
  } finally {
    await close();
  }
});

test('three refused files say one error each, naming the file, in human units', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'portal-files-'));
  const { page, close } = await openPortal(['--max-upload-bytes', String(1024 * 1024)]);
  try {
    const file = (name, bytes) => {
      writeFileSync(join(folder, name), bytes);
      return join(folder, name);
    };
    const refused = [
      file('setup.exe', Buffer.from([0x4d, 0x5a, 0x90, 0, 3, 0, 0, 0])),
      file('empty.txt', ''),
      file('huge.txt', 'a'.repeat(1536 * 1024)),
    ];
    await page.getByTestId('attach').setInputFiles(refused);
    const errors = page.locator('.attachment-chip.refused [role="alert"]');
    await errors.nth(2).waitFor({ timeout: 30000 });
    const said = await errors.allInnerTexts();
    assert.equal(said.length, 3);
    assert.match(said[0], /^“setup\.exe” is not a kind of file the portal reads; attach plain text/);
    assert.match(said[1], /^“empty\.txt” is empty; choose a file with something in it$/);
    assert.match(said[2], /^“huge\.txt” is 1\.5 MB, and the most a file may be is 1 MB; send a smaller file$/);
    for (const sentence of said) {
      assert.doesNotMatch(sentence, /`|bytes/, sentence);
    }

    // A text file is read at once: its chip reads "Ready".
    await page.getByTestId('attach').setInputFiles([file('notes.md', '# Notes\n\nThree herons.\n')]);
    const notes = page.locator('[data-testid="attachment-chip"][data-uploaded="true"]');
    await notes.waitFor();
    assert.match(await notes.innerText(), /^notes\.md\s*Ready/);
    await page.screenshot({ path: join(shots, 'files-refused.png') });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: join(shots, 'files-refused-dark.png') });
    await noSeriousViolations(page, 'refused files');

    // Each error is dismissed on its own.
    await page.getByRole('button', { name: 'Dismiss the error about empty.txt' }).click();
    assert.equal(await errors.count(), 2);
    assert.equal(await page.getByTestId('attachment-chip').count(), 3);
  } finally {
    await close();
    rmSync(folder, { recursive: true, force: true });
  }
});
