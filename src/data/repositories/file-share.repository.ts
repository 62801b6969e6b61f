import { Types, type HydratedDocument } from 'mongoose';
import type { TenantDb } from '../mongo.js';
import type { FileShareDoc } from '../models/media-file.model.js';

export type FileShareRecord = HydratedDocument<FileShareDoc>;

/** FileShare records of one tenant: a share path that resolves to a media file. */
export class FileShareRepository {
  constructor(private readonly db: TenantDb) {}

  async create(input: {
    mediaFileId: string;
    path: string;
    createdBy: string;
    expiresAt?: Date;
  }): Promise<FileShareRecord> {
    return this.db.models.FileShare.create({
      mediaFileId: new Types.ObjectId(input.mediaFileId),
      path: input.path,
      createdBy: new Types.ObjectId(input.createdBy),
      expiresAt: input.expiresAt,
    });
  }

  findByPath(path: string): Promise<FileShareRecord | null> {
    return this.db.models.FileShare.findOne({ path });
  }

  findForMediaFile(mediaFileId: string): Promise<FileShareRecord | null> {
    return this.db.models.FileShare.findOne({ mediaFileId: new Types.ObjectId(mediaFileId) }).sort({ createdAt: -1 });
  }
}
