import { Types, Schema, type InferSchemaType } from 'mongoose';

/** A contact group owned by a user, with its participants. */
export const GroupSchema = new Schema(
  {
    name: { type: String, required: true, trim: true },
    ownerId: { type: Schema.Types.ObjectId, required: true },
    participantIds: { type: [Schema.Types.ObjectId], default: [] },
  },
  { timestamps: true },
);
GroupSchema.index({ ownerId: 1, name: 1 });
GroupSchema.index({ participantIds: 1 });

export type GroupDoc = InferSchemaType<typeof GroupSchema>;

/** A stored document as read (lean, with its id and timestamps). */
export type GroupRecord = GroupDoc & { _id: Types.ObjectId; createdAt?: Date; updatedAt?: Date };
